#pragma once
#include <concepts>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

namespace clink {

// Keys are encoded to compact bytes (fixed width, order-preserving, for numbers); the
// 64-bit hash of those bytes decides the key group. Encoding and hash are stable across
// processes and releases: checkpoints and workers depend on it (pinned by a test).
template <class K>
struct KeyCodec;

template <std::integral K>
struct KeyCodec<K> {
  // Big-endian with the sign bit flipped, so byte order equals numeric order.
  static void encode(K key, std::string& out) {
    using U = std::make_unsigned_t<K>;
    U u = static_cast<U>(key);
    if constexpr (std::is_signed_v<K>) u ^= U(1) << (sizeof(K) * 8 - 1);
    char buf[sizeof(K)];
    for (std::size_t i = 0; i < sizeof(K); ++i) buf[i] = static_cast<char>(u >> (8 * (sizeof(K) - 1 - i)));
    out.append(buf, sizeof(K));
  }
  static K decode(std::string_view& in) {
    using U = std::make_unsigned_t<K>;
    U u = 0;
    for (std::size_t i = 0; i < sizeof(K); ++i) u = static_cast<U>((u << 8) | static_cast<unsigned char>(in[i]));
    if constexpr (std::is_signed_v<K>) u ^= U(1) << (sizeof(K) * 8 - 1);
    in.remove_prefix(sizeof(K));
    return static_cast<K>(u);
  }
};

template <>
struct KeyCodec<std::string> {
  // A 4-byte big-endian length, then the bytes: self-delimiting inside composite keys.
  static void encode(std::string_view key, std::string& out) {
    KeyCodec<std::uint32_t>::encode(static_cast<std::uint32_t>(key.size()), out);
    out.append(key);
  }
  static std::string decode(std::string_view& in) {
    auto n = KeyCodec<std::uint32_t>::decode(in);
    std::string s(in.substr(0, n));
    in.remove_prefix(n);
    return s;
  }
};

template <class A, class B>
struct KeyCodec<std::pair<A, B>> {
  static void encode(const std::pair<A, B>& key, std::string& out) {
    KeyCodec<A>::encode(key.first, out);
    KeyCodec<B>::encode(key.second, out);
  }
  static std::pair<A, B> decode(std::string_view& in) {
    A a = KeyCodec<A>::decode(in);
    B b = KeyCodec<B>::decode(in);
    return {std::move(a), std::move(b)};
  }
};

template <class K>
std::string encode_key(const K& key) {
  std::string out;
  KeyCodec<K>::encode(key, out);
  return out;
}
template <class K>
K decode_key(std::string_view bytes) {
  return KeyCodec<K>::decode(bytes);
}

// XXH3-64 of the encoded key bytes, seed 0.
std::uint64_t key_hash(std::string_view key_bytes);

inline constexpr int kDefaultMaxParallelism = 128;

inline int key_group_for_hash(std::uint64_t hash, int max_parallelism) {
  return static_cast<int>(hash % static_cast<std::uint64_t>(max_parallelism));
}
// Flink's KeyGroupRangeAssignment: contiguous ranges of key groups per subtask.
inline int subtask_for_key_group(int key_group, int max_parallelism, int parallelism) {
  return static_cast<int>(static_cast<std::int64_t>(key_group) * parallelism / max_parallelism);
}

// Inclusive range [first, last] of key groups owned by one subtask.
struct KeyGroupRange {
  int first = 0;
  int last = -1;
  bool contains(int kg) const { return kg >= first && kg <= last; }
  int size() const { return last - first + 1; }
  friend bool operator==(const KeyGroupRange&, const KeyGroupRange&) = default;
};
KeyGroupRange key_group_range_for_subtask(int max_parallelism, int parallelism, int subtask);

}  // namespace clink
