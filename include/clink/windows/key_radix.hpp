#pragma once
// The keys whose encoded bytes (KeyCodec) order as an unsigned integer image, which the
// window engine radix-sorts (window_detail::sort_by_key_bytes) instead of comparing
// encoded keys: integers, and any key type that specialises KeyRadix beside its
// KeyCodec (has_image false for a key without one, e.g. NULL, sends that sort to the
// comparisons). Small on purpose: key types' headers include it.
#include <concepts>
#include <type_traits>

namespace clink::window_detail {

template <class K>
struct KeyRadix : std::false_type {};
template <std::integral K>
  requires(!std::same_as<K, bool>)
struct KeyRadix<K> : std::true_type {
  using U = std::make_unsigned_t<K>;
  static bool has_image(const K&) { return true; }
  static U image(const K& k) {
    if constexpr (std::is_signed_v<K>) return static_cast<U>(static_cast<U>(k) ^ (U(1) << (8 * sizeof(K) - 1)));
    else return k;
  }
};

}  // namespace clink::window_detail
