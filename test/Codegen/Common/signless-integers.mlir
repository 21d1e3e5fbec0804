// nf-lower-tosa-to-linalg first rewrites a function with unsigned integer
// types over signless ones (SignlessIntegers.h): the same bits in every
// argument and result, unsigned orderings as signed ones of values with
// the top bit flipped, and casts from and to unsigned types as unsigned
// conversions. Ops whose meaning on unsigned integers is not kept are
// errors at them.
// RUN: nf-opt %s --split-input-file --verify-diagnostics --mlir-disable-threading --nf-lower-tosa-to-linalg | FileCheck %s

// CHECK-LABEL: func.func @order
// CHECK-SAME: (%[[A:.+]]: tensor<2x4xi8> {{.+}}, %[[B:.+]]: tensor<2x4xi8> {{.+}}) -> (tensor<2x4xi1>, tensor<2x4xi8>)
// CHECK: %[[TOP:.+]] = arith.constant dense<-128> : tensor<1x1xi8>
// CHECK: %[[FA:.+]] = linalg.generic {{.+}} ins(%[[A]], %[[TOP]] :
// CHECK: arith.xori
// CHECK: %[[FB:.+]] = linalg.generic {{.+}} ins(%[[B]], %[[TOP]] :
// CHECK: arith.xori
// CHECK: linalg.generic {{.+}} ins(%[[FA]], %[[FB]] :
// CHECK: arith.cmpi sgt
// CHECK: %[[MAX:.+]] = linalg.generic {{.+}} ins(%{{.+}}, %{{.+}} : tensor<2x4xi8>, tensor<2x4xi8>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.maxsi
// CHECK: linalg.generic {{.+}} ins(%[[MAX]], %[[TOP]] :
// CHECK: arith.xori
func.func @order(%a: tensor<2x4xui8>, %b: tensor<2x4xui8>) -> (tensor<2x4xi1>, tensor<2x4xui8>) {
  %gt = tosa.greater %a, %b : (tensor<2x4xui8>, tensor<2x4xui8>) -> tensor<2x4xi1>
  %max = tosa.maximum %a, %b : (tensor<2x4xui8>, tensor<2x4xui8>) -> tensor<2x4xui8>
  return %gt, %max : tensor<2x4xi1>, tensor<2x4xui8>
}

// -----

// Booleans order as unsigned too: upstream's max of i1 is signed (true is
// -1), TOSA's reduce_max of booleans their or.
// CHECK-LABEL: func.func @bool_max
// CHECK: arith.constant dense<true> : tensor<1x1xi1>
// CHECK: arith.xori
// CHECK: arith.maxsi
// CHECK: arith.xori
func.func @bool_max(%p: tensor<2x4xi1>) -> tensor<2x1xi1> {
  %m = tosa.reduce_max %p {axis = 1 : i32} : (tensor<2x4xi1>) -> tensor<2x1xi1>
  return %m : tensor<2x1xi1>
}

// -----

// CHECK-LABEL: func.func @casts
// CHECK-SAME: (%{{.+}}: tensor<4xi16>, %{{.+}}: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi32>, tensor<4xi8>, tensor<4xi16>)
// CHECK: arith.uitofp %{{.+}} : i16 to f32
// CHECK: arith.extui %{{.+}} : i16 to i32
// CHECK: math.roundeven
// CHECK: arith.fptoui %{{.+}} : f32 to i8
// CHECK: arith.cmpf ult
// CHECK: arith.cmpf oge
// CHECK-NOT: tosa.cast
// CHECK: return
func.func @casts(%u: tensor<4xui16>, %f: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi32>, tensor<4xui8>, tensor<4xi16>) {
  %a = tosa.cast %u : (tensor<4xui16>) -> tensor<4xf32>
  %b = tosa.cast %u : (tensor<4xui16>) -> tensor<4xi32>
  %c = tosa.cast %f : (tensor<4xf32>) -> tensor<4xui8>
  %d = tosa.cast %u : (tensor<4xui16>) -> tensor<4xi16>
  return %a, %b, %c, %d : tensor<4xf32>, tensor<4xi32>, tensor<4xui8>, tensor<4xi16>
}

// -----

// Constants keep their bits.
// CHECK-LABEL: func.func @constant
// CHECK: arith.constant dense<[-1, 0, 127, -128]> : tensor<4xi8>
func.func @constant(%a: tensor<4xui8>) -> tensor<4xui8> {
  %c = "tosa.const"() <{value = dense<[255, 0, 127, 128]> : tensor<4xui8>}> : () -> tensor<4xui8>
  %s = tosa.add %a, %c : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  return %s : tensor<4xui8>
}

// -----

func.func @clamp(%a: tensor<4xui8>) -> tensor<4xui8> {
  // expected-error @+1 {{'tosa.clamp' op takes or gives unsigned integers, which normfuse runs for TOSA's add, sub, mul, negate, comparisons, maximum, minimum, bitwise and logical ops, casts, reductions, argmax and data movement only}}
  %c = tosa.clamp %a {min_int = 1 : i64, max_int = 200 : i64, min_fp = 0.0 : f32, max_fp = 0.0 : f32} : (tensor<4xui8>) -> tensor<4xui8>
  return %c : tensor<4xui8>
}

// -----

// expected-error @+1 {{'func.func' op takes or returns unsigned or signed integers and is called by another function; normfuse runs such a function only as an entry point}}
func.func @callee(%a: tensor<4xui8>) -> tensor<4xui8> {
  return %a : tensor<4xui8>
}

func.func @caller(%a: tensor<4xui8>) -> tensor<4xui8> {
  %r = func.call @callee(%a) : (tensor<4xui8>) -> tensor<4xui8>
  return %r : tensor<4xui8>
}
