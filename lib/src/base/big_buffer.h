// Buffers of many megabytes, such as the n×n maps of a run that keeps its
// weights. Fresh memory is faulted in page by page as it is first written;
// with 4 KiB pages the faults of a 32 MiB map took as long as the attention
// itself (n = 2048, f32). Asking the kernel for transparent huge pages on
// such a buffer cuts the faults 512-fold where the system allows it
// (/sys/kernel/mm/transparent_hugepage/enabled set to "madvise" or
// "always"); elsewhere the advice is ignored and nothing changes.
#pragma once

#include <cstddef>
#include <cstring>
#include <type_traits>
#include <vector>

#include "attn/tensor.h"

namespace attn {

// Advises huge pages for the whole 2 MiB pages inside [p, p + bytes) when
// the range is large enough for it to matter.
void advise_huge_pages(void* p, size_t bytes);

// v emptied and given room for n elements (not yet touched), advised as
// above.
template <class V>
void reserve_big(V& v, size_t n) {
  V().swap(v);
  v.reserve(n);
  advise_huge_pages(v.data(), n * sizeof(typename V::value_type));
}

// v = n elements left unset, in memory advised as above: the caller writes
// every one. Sanitizer builds set every byte to 0xFF first (NaN in a
// double, 255 in a flag), so a cell the caller misses shows in the tests.
template <class T>
void assign_big(Values<T>& v, size_t n) {
  reserve_big(v, n);
  v.resize(n);
#if defined(__SANITIZE_ADDRESS__)
  static_assert(std::is_trivially_copyable_v<T>);
  std::memset(static_cast<void*>(v.data()), 0xFF, n * sizeof(T));
#endif
}

// v = n copies of `fill`, in memory advised as above.
template <class T, class A>
void assign_big(std::vector<T, A>& v, size_t n, const T& fill) {
  reserve_big(v, n);
  v.resize(n, fill);
}

}  // namespace attn
