#include "base/path.h"

#include <sys/stat.h>

#include <cctype>

namespace attn::path {

Kind kind_of(const std::string& p) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) return Kind::kNone;
  if (S_ISREG(st.st_mode)) return Kind::kRegularFile;
  if (S_ISDIR(st.st_mode)) return Kind::kDirectory;
  return Kind::kOther;
}

bool is_regular_file(const std::string& p) { return kind_of(p) == Kind::kRegularFile; }

bool is_directory(const std::string& p) { return kind_of(p) == Kind::kDirectory; }

bool exists(const std::string& p) { return kind_of(p) != Kind::kNone; }

std::string join(const std::string& dir, const std::string& name) {
  return dir.empty() || dir.back() == '/' ? dir + name : dir + "/" + name;
}

std::string directory_of(const std::string& p) {
  const size_t slash = p.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return p.substr(0, slash);
}

std::string directory_prefix(const std::string& p) {
  const size_t slash = p.find_last_of('/');
  return slash == std::string::npos ? "" : p.substr(0, slash + 1);
}

std::string file_name_of(const std::string& p) {
  const size_t slash = p.find_last_of('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

std::string extension(const std::string& p) {
  const std::string name = file_name_of(p);
  const size_t dot = name.find_last_of('.');
  if (dot == std::string::npos) return "";
  std::string e = name.substr(dot + 1);
  for (char& c : e) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return e;
}

std::string without_extension(const std::string& p) {
  const std::string name = file_name_of(p);
  const size_t dot = name.find_last_of('.');
  return dot == std::string::npos ? p : p.substr(0, p.size() - name.size() + dot);
}

}  // namespace attn::path
