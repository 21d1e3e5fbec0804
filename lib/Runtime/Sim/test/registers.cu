// setmaxnreg's rules, which the simulator enforces (sim_test.cpp). Not
// for NVRTC: ptxas itself refuses the count of case 3, and the products'
// kernels are what NVRTCResourceTest compiles with setmaxnreg.

// setmaxnreg in a block of 3 warpgroups (384 threads, 168 registers a
// thread at launch): warpgroup 2 (the producer) gives back all but 40, and
// 0 and 1 take, by `what`,
//   0: 232 (64512 registers in all, the block's);
//   1: 240 (66560: an increase that would wait forever);
//   2: 232, but in warp 0 alone (not the whole warpgroup);
//   3: 236 (not a multiple of 8);
//   4: warpgroup 2 "gives back" to 200 (a decrease to more than it holds).
// Each thread writes its warpgroup's role to out.
extern "C" __global__ void __launch_bounds__(384, 1)
    setmaxnreg_roles(int what, int *__restrict__ out) {
  int t = threadIdx.x;
  if (t >= 256) {
    if (what == 4)
      nf_setmaxnreg<false, 200>();
    else
      nf_setmaxnreg<false, 40>();
    nf_stg(out + t, 2);
  } else {
    if (what == 1)
      nf_setmaxnreg<true, 240>();
    else if (what == 3)
      nf_setmaxnreg<true, 236>();
    else if (what != 2 || t < 32)
      nf_setmaxnreg<true, 232>();
    nf_stg(out + t, t / 128);
  }
}
NF_SIM_ENTRY(setmaxnreg_roles)
