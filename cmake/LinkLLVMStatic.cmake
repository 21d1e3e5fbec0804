# Links LLVM's static component archives wherever Debian's MLIR libraries
# (and normfuse's own) name the shared libLLVM (the imported target LLVM):
# the target's file becomes a linker script holding one GROUP of every
# component archive, so each binary takes only the archive members it uses
# (and --gc-sections drops their unused functions), with the system
# libraries they need. z3 and libxml2, which llvm-config also lists, are
# left out: the code normfuse reaches (the JIT, the X86 back end, the
# parsers) calls neither, and a member that did would fail to link.
set(nf_llvm_config "${LLVM_TOOLS_BINARY_DIR}/llvm-config")
execute_process(
  COMMAND "${nf_llvm_config}" --link-static --libfiles all
  OUTPUT_VARIABLE nf_llvm_archives OUTPUT_STRIP_TRAILING_WHITESPACE
  RESULT_VARIABLE nf_llvm_config_status)
if(NOT nf_llvm_config_status EQUAL 0 OR nf_llvm_archives STREQUAL "")
  message(FATAL_ERROR "NF_LINK_LLVM_STATIC: '${nf_llvm_config} --link-static "
                      "--libfiles all' failed: install llvm-19-dev "
                      "(scripts/setup.sh does), or configure with "
                      "-DNF_LINK_LLVM_STATIC=OFF to link libLLVM.so")
endif()
separate_arguments(nf_llvm_archives UNIX_COMMAND "${nf_llvm_archives}")
# llvm-config lists every component the build knew, some of which Debian
# packages apart (Polly): keep the archives that are installed.
set(nf_llvm_installed)
foreach(archive ${nf_llvm_archives})
  if(EXISTS "${archive}")
    list(APPEND nf_llvm_installed "${archive}")
  endif()
endforeach()
set(nf_llvm_archives ${nf_llvm_installed})
if(NOT "${LLVM_LIBRARY_DIR}/libLLVMSupport.a" IN_LIST nf_llvm_archives)
  message(FATAL_ERROR "NF_LINK_LLVM_STATIC: ${LLVM_LIBRARY_DIR}/libLLVMSupport.a "
                      "is missing: install llvm-19-dev (scripts/setup.sh does)")
endif()
list(JOIN nf_llvm_archives "\n  " nf_llvm_group)
set(nf_llvm_script "${CMAKE_BINARY_DIR}/lib/libLLVM-static-group.ld")
file(CONFIGURE OUTPUT "${nf_llvm_script}"
     CONTENT "/* LLVM 19's component archives (cmake/LinkLLVMStatic.cmake) */\nGROUP (\n  ${nf_llvm_group}\n)\n")
find_package(ZLIB REQUIRED)
find_library(NF_ZSTD NAMES zstd REQUIRED)
set_target_properties(LLVM PROPERTIES
  IMPORTED_LOCATION "${nf_llvm_script}"
  IMPORTED_LOCATION_RELWITHDEBINFO "${nf_llvm_script}"
  IMPORTED_SONAME "libLLVM-static-group.ld"
  IMPORTED_SONAME_RELWITHDEBINFO "libLLVM-static-group.ld"
  INTERFACE_LINK_LIBRARIES "ZLIB::ZLIB;${NF_ZSTD};Threads::Threads;${CMAKE_DL_LIBS};rt;m")
message(STATUS "normfuse: linking LLVM's static component archives (NF_LINK_LLVM_STATIC)")
