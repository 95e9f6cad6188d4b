#include "core/utf8.hpp"

#include <cstdint>

namespace ccbench {
namespace {

// Length of the valid UTF-8 sequence starting at text[i], or 0 if it is not one (RFC 3629:
// no overlong forms, no surrogates, nothing above U+10FFFF).
std::size_t sequence_length(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<std::uint8_t>(text[k]); };
  const std::uint8_t b0 = byte(i);
  if (b0 < 0x80) return 1;
  std::size_t n = 0;
  std::uint8_t lo = 0x80, hi = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > text.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return n;
}

}  // namespace

bool is_valid_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = sequence_length(text, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string escape_invalid_utf8(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size() + 8);
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = sequence_length(text, i);
    if (n == 0) {
      const auto b = static_cast<std::uint8_t>(text[i]);
      out += "\\x";
      out += kHex[b >> 4];
      out += kHex[b & 0xF];
      ++i;
    } else {
      out.append(text, i, n);
      i += n;
    }
  }
  return out;
}

std::vector<std::string> escape_invalid_utf8(nlohmann::json& value, const std::string& pointer) {
  std::vector<std::string> changed;
  auto escape_pointer_token = [](const std::string& key) {
    std::string token;
    for (char c : key) {
      if (c == '~') {
        token += "~0";
      } else if (c == '/') {
        token += "~1";
      } else {
        token += c;
      }
    }
    return token;
  };
  if (value.is_string()) {
    auto& s = value.get_ref<std::string&>();
    if (!is_valid_utf8(s)) {
      s = escape_invalid_utf8(s);
      changed.push_back(pointer.empty() ? "/" : pointer);
    }
  } else if (value.is_array()) {
    for (std::size_t i = 0; i < value.size(); ++i) {
      auto more = escape_invalid_utf8(value[i], pointer + "/" + std::to_string(i));
      changed.insert(changed.end(), more.begin(), more.end());
    }
  } else if (value.is_object()) {
    bool bad_key = false;
    for (auto& [key, item] : value.items()) bad_key = bad_key || !is_valid_utf8(key);
    if (bad_key) {
      nlohmann::json rebuilt = nlohmann::json::object();
      for (auto& [key, item] : value.items()) {
        const std::string k = is_valid_utf8(key) ? key : escape_invalid_utf8(key);
        if (k != key) changed.push_back(pointer + "/" + escape_pointer_token(k));
        rebuilt[k] = std::move(item);
      }
      value = std::move(rebuilt);
    }
    for (auto& [key, item] : value.items()) {
      auto more = escape_invalid_utf8(item, pointer + "/" + escape_pointer_token(key));
      changed.insert(changed.end(), more.begin(), more.end());
    }
  }
  return changed;
}

}  // namespace ccbench
