// Buffers of many megabytes, such as the n×n maps of a run that keeps its
// weights. Fresh memory is faulted in page by page as it is first written;
// with 4 KiB pages the faults of a 32 MiB map took as long as the attention
// itself (n = 2048, f32). Asking the kernel for transparent huge pages on
// such a buffer cuts the faults 512-fold where the system allows it
// (/sys/kernel/mm/transparent_hugepage/enabled set to "madvise" or
// "always"); elsewhere the advice is ignored and nothing changes.
#pragma once

#include <cstddef>
#include <vector>

namespace attn {

// Advises huge pages for the whole 2 MiB pages inside [p, p + bytes) when
// the range is large enough for it to matter.
void advise_huge_pages(void* p, size_t bytes);

// v = n value-initialized elements (zeros), in memory advised as above.
template <class T>
void assign_big(std::vector<T>& v, size_t n) {
  std::vector<T>().swap(v);
  v.reserve(n);  // allocated, not yet touched
  advise_huge_pages(v.data(), n * sizeof(T));
  v.resize(n);
}

}  // namespace attn
