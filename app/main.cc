// attn: the command-line program (app/cli.cc does the work).
#include <cstdlib>  // defines __GLIBC__ on glibc systems

#include "cli.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

int main(int argc, char** argv) {
#if defined(__GLIBC__)
  // Memory the program frees stays with it for its next allocation, as a
  // long-running server's allocator keeps it, instead of going back to the
  // kernel: glibc hands blocks of 32 MiB and more straight to mmap and
  // unmaps them on free, so each run of `attn batch` or `attn bench` that
  // keeps the 32 MiB weights of 2048 tokens had them faulted in and cleared
  // page by page again (15% of such a run). Up to 1 GiB of free memory is
  // kept; the peak is unchanged.
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
  return attn::cli::run_program(argc, argv);
}
