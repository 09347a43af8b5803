// NumPy .npz archives (np.savez and np.savez_compressed): a ZIP file of
// .npy members, stored or deflated, ZIP64 included. A member is found by
// its array name ("attentions" for the member attentions.npy) and handed
// over as the bytes of its .npy file: a view of the memory-mapped archive
// when stored, decompressed within a byte budget when deflated. Member
// sizes and offsets are checked against the archive before anything is
// read or allocated, and the CRC-32 of every member handed over is checked.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "attn/file_io.h"

namespace attn {

struct NpzMember {
  std::string name;     // the array's name, without ".npy"
  uint16_t method = 0;  // 0 stored, 8 deflated
  uint32_t crc = 0;
  uint64_t compressed = 0, size = 0;
  uint64_t local_header = 0;  // offset of its local header
};

class NpzArchive {
 public:
  static NpzArchive open(const std::string& path, int64_t max_stream_bytes = kDefaultMaxInputBytes);
  static NpzArchive from_bytes(FileBytes bytes, const std::string& name);

  const std::string& name() const { return name_; }
  const std::vector<NpzMember>& members() const { return members_; }
  // The member holding the array `array` (its .npy bytes); an input error
  // naming the nearest name when there is none. A member over max_bytes
  // uncompressed is refused before it is read (--max-input-bytes).
  FileBytes member(std::string_view array, int64_t max_bytes = kDefaultMaxInputBytes) const;

 private:
  void read_directory();

  FileBytes bytes_;
  std::string name_;
  std::vector<NpzMember> members_;
};

// The bytes of an .npz archive of stored (uncompressed) members, one per
// (array name, .npy bytes) pair, in order: what np.savez writes, readable
// by np.load and NpzArchive. Fixed timestamps, so the same arrays give the
// same bytes. A usage error past 4 GiB (no ZIP64 is written).
std::string format_npz(const std::vector<std::pair<std::string, std::string>>& members);

}  // namespace attn
