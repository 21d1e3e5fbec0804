// Warp operations with width < 32, on int, int64_t and double.

extern "C" __global__ void warp_ops(const int *__restrict__ in,
                                    int *__restrict__ out, int64_t n) {
  int t = threadIdx.x;
  int v = nf_ldg(in + t);
  int sum = v; // sum over each segment of 8 lanes
  for (int o = 4; o > 0; o >>= 1)
    sum += __shfl_xor_sync(0xffffffffu, sum, o, 8);
  int bcast = __shfl_sync(0xffffffffu, v, 3, 8); // lane 3 of the segment
  int scan = v; // inclusive prefix sum within the segment of 16
  for (int o = 1; o < 16; o <<= 1) {
    int y = __shfl_up_sync(0xffffffffu, scan, o, 16);
    if (t % 16 >= o)
      scan += y;
  }
  int down = __shfl_down_sync(0xffffffffu, v, 2, 4);
  unsigned ballot = __ballot_sync(0xffffffffu, v & 1);
  int any = __any_sync(0xffffffffu, v == 7),
      all = __all_sync(0xffffffffu, v < 1000);
  int64_t wide = __shfl_xor_sync(0xffffffffu, ((int64_t)v << 33) + t, 1);
  double d = __shfl_xor_sync(0xffffffffu, (double)v + 0.25, 5);
  // laneMask >= width reads an earlier segment, never a later one (PTX).
  int cross = __shfl_xor_sync(0xffffffffu, v, 8, 8);
  int wrapped = __shfl_sync(0xffffffffu, v, 43, 8); // lane 43 % 8 = 3
  int up = __shfl_up_sync(0xffffffffu, v, 3, 8);    // own value in lanes 0-2
  __syncwarp();
  int64_t o = 11 * (int64_t)t;
  nf_stg(out + o + 0, sum);
  nf_stg(out + o + 1, bcast);
  nf_stg(out + o + 2, scan);
  nf_stg(out + o + 3, down);
  nf_stg(out + o + 4, (int)ballot);
  nf_stg(out + o + 5, any + 2 * all);
  nf_stg(out + o + 6, (int)(wide >> 33) * 1000 + (int)(wide & 1023));
  nf_stg(out + o + 7, (int)(d * 4));
  nf_stg(out + o + 8, cross);
  nf_stg(out + o + 9, wrapped);
  nf_stg(out + o + 10, up);
  (void)n;
}
NF_SIM_ENTRY(warp_ops)

// Lanes 0-15 read lanes 16-31, which are not in the mask: poison (-1).
extern "C" __global__ void outside_mask(int *out) {
  int v = (int)threadIdx.x;
  if (threadIdx.x < 16)
    v = __shfl_xor_sync(0x0000ffffu, v, 16);
  nf_stg(out + threadIdx.x, v);
}
NF_SIM_ENTRY(outside_mask)
