// 16-bit float conversions. Thread i converts bit pattern i as __half and
// as __nv_bfloat16 to float and back, and rounds probes[i] if i < numProbes.

extern "C" __global__ void convert(const uint16_t *bits, float *halfAsFloat,
                                   uint16_t *halfBack, float *bf16AsFloat,
                                   uint16_t *bf16Back, const float *probes,
                                   uint16_t *probeHalf, uint16_t *probeBf16,
                                   int64_t numProbes) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  uint16_t h = nf_ldg(bits + i);
  float f = __half2float(__ushort_as_half(h));
  nf_stg(halfAsFloat + i, f);
  nf_stg(halfBack + i, (uint16_t)__half_as_ushort(__float2half_rn(f)));
  float g = __bfloat162float(__ushort_as_bfloat16(h));
  nf_stg(bf16AsFloat + i, g);
  nf_stg(bf16Back + i, (uint16_t)__bfloat16_as_ushort(__float2bfloat16_rn(g)));
  if (i < numProbes) {
    float p = nf_ldg(probes + i);
    __half ph = __float2half(p);
    nf_stg(probeHalf + i, (uint16_t)__half_as_ushort(ph));
    nf_stg(probeBf16 + i, (uint16_t)__bfloat16_as_ushort(__float2bfloat16(p)));
  }
}
NF_SIM_ENTRY(convert)
