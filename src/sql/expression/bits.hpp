// Packing BOOLEAN columns (one 0/1 byte per row) to bitmaps and back, 8 rows per
// multiply instead of a shift per row. Private to src/sql.
#pragma once
#include <cstdint>
#include <cstring>

namespace clink::sql::bits {

// out[w] bit j = (v[64w + j] & 1) for n rows; bits past n are zero.
inline void pack_bools(const std::uint8_t* v, std::size_t n, std::uint64_t* out) {
  std::size_t full = n / 64;
  for (std::size_t w = 0; w < full; ++w) {
    std::uint64_t word = 0;
    for (std::size_t k = 0; k < 8; ++k) {
      std::uint64_t x;
      std::memcpy(&x, v + w * 64 + k * 8, 8);
      // Bytes b0..b7 (0/1) -> bits 56..63 of the product: bit 56+i = b_i.
      word |= (((x & 0x0101010101010101ULL) * 0x0102040810204080ULL) >> 56) << (k * 8);
    }
    out[w] = word;
  }
  if (n % 64 != 0) {
    std::uint64_t word = 0;
    for (std::size_t i = full * 64; i < n; ++i) word |= static_cast<std::uint64_t>(v[i] & 1) << (i - full * 64);
    out[full] = word;
  }
}

// out[i] = bit i of `bits` (0/1 bytes) for n rows.
inline void unpack_bits(const std::uint64_t* bits, std::size_t n, std::uint8_t* out) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t b = (bits[i >> 6] >> (i & 63)) & 0xFF;
    std::uint64_t y = (b * 0x0101010101010101ULL) & 0x8040201008040201ULL;
    std::uint64_t z = ((y + 0x7F7F7F7F7F7F7F7FULL) >> 7) & 0x0101010101010101ULL;
    std::memcpy(out + i, &z, 8);
  }
  for (; i < n; ++i) out[i] = static_cast<std::uint8_t>((bits[i >> 6] >> (i & 63)) & 1);
}

}  // namespace clink::sql::bits
