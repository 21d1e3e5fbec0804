# Writes the text of file IN as a C++ raw string literal into file OUT, for
# an #include inside an initializer. Usage:
#   cmake -DIN=<file> -DOUT=<file.inc> -P EmbedText.cmake
file(READ "${IN}" text)
file(WRITE "${OUT}.tmp" "R\"nfembed(${text})nfembed\"\n")
file(RENAME "${OUT}.tmp" "${OUT}")
