#include "attn/npz.h"

#include <array>
#include <climits>
#include <set>
#include <string>

#include "attn/error.h"
#include "attn/options.h"
#include "base/names.h"
#include "io/cells.h"

// stb_image's inflate (the zlib decoder behind its PNG reader) unpacks
// deflated members; the rest of stb_image is left out.
#define STB_IMAGE_STATIC
#define STBI_ONLY_PNG
#define STBI_NO_STDIO
#define STB_IMAGE_IMPLEMENTATION
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wconversion"
#pragma GCC diagnostic ignored "-Wsign-conversion"
#pragma GCC diagnostic ignored "-Wold-style-cast"
#pragma GCC diagnostic ignored "-Wcast-qual"
#pragma GCC diagnostic ignored "-Wshadow"
#pragma GCC diagnostic ignored "-Wdouble-promotion"
#pragma GCC diagnostic ignored "-Wuseless-cast"
#pragma GCC diagnostic ignored "-Wimplicit-fallthrough"
#pragma GCC diagnostic ignored "-Wduplicated-branches"
#pragma GCC diagnostic ignored "-Wnull-dereference"
#endif
#include <stb/stb_image.h>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

namespace attn {

namespace {

uint64_t le(std::string_view b, uint64_t at, size_t n) {
  return detail::load_le(reinterpret_cast<const unsigned char*>(b.data()) + at, n);
}

// CRC-32 (ZIP's) of data. With `bytes`,
// the pages of data already summed are released as it goes: a stored
// member of a mapped archive is checked without keeping it all resident.
uint32_t crc32(std::string_view data, const FileBytes* bytes = nullptr) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  constexpr size_t kChunk = size_t{1} << 22;
  uint32_t c = 0xFFFFFFFFu;
  for (size_t at = 0; at < data.size(); at += kChunk) {
    const std::string_view chunk = data.substr(at, kChunk);
    for (char ch : chunk) c = table[(c ^ static_cast<unsigned char>(ch)) & 0xff] ^ (c >> 8);
    if (bytes) bytes->release(chunk.data(), chunk.size());
  }
  return c ^ 0xFFFFFFFFu;
}

constexpr uint32_t kEnd = 0x06054b50, kEnd64 = 0x06064b50, kLocator64 = 0x07064b50,
                   kCentral = 0x02014b50, kLocal = 0x04034b50;

}  // namespace

NpzArchive NpzArchive::open(const std::string& path, int64_t max_stream_bytes) {
  return from_bytes(map_file(path, {}, max_stream_bytes), display_name(path));
}

NpzArchive NpzArchive::from_bytes(FileBytes bytes, const std::string& name) {
  NpzArchive a;
  a.bytes_ = std::move(bytes);
  a.name_ = name;
  a.read_directory();
  return a;
}

void NpzArchive::read_directory() {
  const std::string_view b = bytes_.view();
  auto bad = [&](const std::string& what) -> void {
    throw_input(name_, "not a readable .npz archive: " + what);
  };
  // The end-of-directory record is in the last 22 + 65535 bytes (after it
  // only its comment).
  if (b.size() < 22) bad("too short for a ZIP file");
  uint64_t end = b.size() - 22;
  const uint64_t stop = b.size() > 22 + 65535 ? b.size() - 22 - 65535 : 0;
  for (;; --end) {
    if (le(b, end, 4) == kEnd && end + 22 + le(b, end + 20, 2) == b.size()) break;
    if (end == stop) bad("no end-of-directory record (is it a ZIP file?)");
  }
  uint64_t count = le(b, end + 10, 2);
  uint64_t dir_size = le(b, end + 12, 4);
  uint64_t dir_at = le(b, end + 16, 4);
  if (end >= 20 && le(b, end - 20, 4) == kLocator64) {
    const uint64_t at64 = le(b, end - 20 + 8, 8);
    if (at64 > b.size() || b.size() - at64 < 56 || le(b, at64, 4) != kEnd64) {
      bad("damaged ZIP64 end-of-directory record");
    }
    count = le(b, at64 + 32, 8);
    dir_size = le(b, at64 + 40, 8);
    dir_at = le(b, at64 + 48, 8);
  }
  if (dir_at > b.size() || dir_size > b.size() - dir_at) bad("the directory lies past the end");
  // Each directory entry takes at least 46 bytes: the count is bounded
  // by the directory's size before anything is reserved.
  if (count > dir_size / 46) bad("the directory is shorter than its entry count");
  uint64_t p = dir_at;
  const uint64_t dir_end = dir_at + dir_size;
  std::set<std::string> names;
  std::set<uint64_t> headers;
  for (uint64_t i = 0; i < count; ++i) {
    if (dir_end - p < 46 || le(b, p, 4) != kCentral)
      bad("damaged directory entry " + std::to_string(i));
    NpzMember m;
    const uint64_t flags = le(b, p + 8, 2);
    m.method = static_cast<uint16_t>(le(b, p + 10, 2));
    m.crc = static_cast<uint32_t>(le(b, p + 16, 4));
    m.compressed = le(b, p + 20, 4);
    m.size = le(b, p + 24, 4);
    const uint64_t name_len = le(b, p + 28, 2), extra_len = le(b, p + 30, 2),
                   comment_len = le(b, p + 32, 2);
    m.local_header = le(b, p + 42, 4);
    if (dir_end - p - 46 < name_len + extra_len + comment_len) {
      bad("directory entry " + std::to_string(i) + " runs past the directory");
    }
    m.name = std::string(b.substr(p + 46, name_len));
    // ZIP64: the sizes and offset that did not fit in 32 bits follow in
    // the extra field 0x0001, in this order.
    uint64_t x = p + 46 + name_len;
    const uint64_t x_end = x + extra_len;
    while (x_end - x >= 4) {
      const uint64_t id = le(b, x, 2), len = le(b, x + 2, 2);
      if (x_end - x - 4 < len) break;
      if (id == 1) {
        uint64_t f = x + 4;
        for (uint64_t* field : {&m.size, &m.compressed, &m.local_header}) {
          if (*field != 0xFFFFFFFFu) continue;
          if (x + 4 + len - f < 8) bad("damaged ZIP64 sizes of " + message_text(m.name));
          *field = le(b, f, 8);
          f += 8;
        }
      }
      x += 4 + len;
    }
    if (flags & 1) bad(message_text(m.name) + " is encrypted");
    // As Python's zipfile (which np.load uses) checks: the member's local
    // header is where the directory says and names the same file, so two
    // entries cannot share one member's bytes.
    const uint64_t h = m.local_header;
    if (h > b.size() || b.size() - h < 30 || le(b, h, 4) != kLocal) {
      bad("no local header where the directory entry of " + message_text(m.name) + " points");
    }
    const uint64_t local_name_len = le(b, h + 26, 2);
    if (b.size() - h - 30 < local_name_len || b.substr(h + 30, local_name_len) != m.name) {
      bad("the directory entry of " + message_text(m.name) +
          " points at the local header of another member");
    }
    if (m.name.size() > 4 && m.name.compare(m.name.size() - 4, 4, ".npy") == 0) {
      m.name.resize(m.name.size() - 4);
    }
    if (!names.insert(m.name).second) bad("two members are called " + message_text(m.name));
    if (!headers.insert(m.local_header).second) {
      bad("two directory entries point at the member of " + message_text(m.name));
    }
    members_.push_back(std::move(m));
    p += 46 + name_len + extra_len + comment_len;
  }
}

FileBytes NpzArchive::member(std::string_view array, int64_t max_bytes) const {
  const NpzMember* m = nullptr;
  for (const NpzMember& c : members_) {
    if (c.name == array) m = &c;
  }
  if (!m) {
    std::vector<std::string> names;
    for (const NpzMember& c : members_) names.push_back(c.name);
    const std::string near = closest_name(array, names);
    throw_input(name_, "no array \"" + message_text(array) + "\" (the archive holds " +
                           std::to_string(members_.size()) +
                           (members_.size() == 1 ? " array)" : " arrays)") +
                           (near.empty() ? "" : "; did you mean \"" + message_text(near) + "\"?"));
  }
  const std::string place = name_ + ":" + message_text(m->name);
  detail::check_input_bytes(place, m->size, max_bytes);
  const std::string_view b = bytes_.view();
  const uint64_t h = m->local_header;
  if (h > b.size() || b.size() - h < 30 || le(b, h, 4) != kLocal) {
    throw_input(place, "damaged archive: no local header where the directory points");
  }
  const uint64_t start = h + 30 + le(b, h + 26, 2) + le(b, h + 28, 2);
  if (start > b.size() || m->compressed > b.size() - start) {
    throw_input(place, "damaged archive: the member's data runs past the end");
  }
  const std::string_view raw = b.substr(start, m->compressed);
  if (m->method == 0) {
    if (m->compressed != m->size) throw_input(place, "damaged archive: stored sizes differ");
    if (crc32(raw, &bytes_) != m->crc) throw_input(place, "damaged archive: CRC-32 mismatch");
    // A view into the archive's bytes: the mapping stays alive with it.
    return FileBytes::slice(bytes_, start, m->size);
  }
  if (m->method != 8) {
    throw_input(place, "compression method " + std::to_string(m->method) +
                           " is not supported (np.savez and np.savez_compressed write 0 and 8)");
  }
  if (m->size > INT_MAX || m->compressed > INT_MAX) {
    throw_input(place,
                "a compressed member over 2 GB; save it with np.savez (uncompressed) "
                "or as .npy");
  }
  // stb_image 2.27 (Debian 12's) reports "bad huffman code" when a stream's
  // last codes sit in its final bytes: it will not read past the end to
  // fill its 16-bit window. Zero bytes after the stream give it the window;
  // they are never decoded, since the stream ends at its final block, and
  // the size and CRC-32 checks below catch any stream that would need them.
  std::string padded;
  padded.reserve(raw.size() + 8);
  padded.append(raw).append(8, '\0');
  std::string data(static_cast<size_t>(m->size), '\0');
  const int n = stbi_zlib_decode_noheader_buffer(data.data(), static_cast<int>(data.size()),
                                                 padded.data(), static_cast<int>(padded.size()));
  if (n < 0 || static_cast<uint64_t>(n) != m->size) {
    throw_input(place, "damaged archive: the deflated data does not unpack to its " +
                           std::to_string(m->size) + " bytes");
  }
  if (crc32(data) != m->crc) throw_input(place, "damaged archive: CRC-32 mismatch");
  return FileBytes::from_string(std::move(data));
}

}  // namespace attn

namespace attn {

namespace {

void put_le(std::string& out, uint64_t v, size_t n) {
  for (size_t i = 0; i < n; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

}  // namespace

std::string format_npz(const std::vector<std::pair<std::string, std::string>>& members) {
  // Stored members, no ZIP64: each member and the whole archive under 4 GiB.
  constexpr uint64_t kLimit = 0xFFFFFFFFu;
  constexpr uint32_t kDosDate = (0u << 9) | (1u << 5) | 1u;  // 1980-01-01: same bytes every run
  uint64_t total = 22;
  for (const auto& [name, data] : members) total += 30 + 46 + 2 * (name.size() + 4) + data.size();
  if (total > kLimit || members.size() > 0xFFFF) {
    throw_usage("an .npz result holds at most 4 GiB (this one would be " + std::to_string(total) +
                " bytes); write the output and weights as .npy files (-o FILE.npy, --weights-out "
                "W.npy)");
  }
  std::string out, directory;
  out.reserve(static_cast<size_t>(total));
  for (const auto& member : members) {
    const std::string name = member.first + ".npy";
    const std::string& data = member.second;
    const uint32_t crc = crc32(data);
    const uint64_t offset = out.size();
    auto common = [&](std::string& s) {  // version needed .. file name length
      put_le(s, 20, 2);                  // version needed: 2.0
      put_le(s, 0, 2);                   // flags
      put_le(s, 0, 2);                   // method: stored
      put_le(s, 0, 2);                   // time
      put_le(s, kDosDate, 2);
      put_le(s, crc, 4);
      put_le(s, data.size(), 4);  // compressed
      put_le(s, data.size(), 4);  // uncompressed
      put_le(s, name.size(), 2);
      put_le(s, 0, 2);  // extra field length
    };
    put_le(out, 0x04034b50, 4);
    common(out);
    out += name;
    out += data;
    put_le(directory, 0x02014b50, 4);
    put_le(directory, 20, 2);  // version made by
    common(directory);
    put_le(directory, 0, 2);  // comment length
    put_le(directory, 0, 2);  // disk number
    put_le(directory, 0, 2);  // internal attributes
    put_le(directory, 0, 4);  // external attributes
    put_le(directory, offset, 4);
    directory += name;
  }
  const uint64_t directory_at = out.size();
  out += directory;
  put_le(out, 0x06054b50, 4);
  put_le(out, 0, 2);  // this disk
  put_le(out, 0, 2);  // disk with the directory
  put_le(out, members.size(), 2);
  put_le(out, members.size(), 2);
  put_le(out, directory.size(), 4);
  put_le(out, directory_at, 4);
  put_le(out, 0, 2);  // comment length
  return out;
}

}  // namespace attn
