// Hash functions: MD5, SHA1, SHA224, SHA256, SHA384, SHA512 and SHA2(s, bits), each
// returning the digest of the string's UTF-8 bytes as lowercase hex (Flink's
// EncodingUtils.hex over MessageDigest). Digests come from OpenSSL's EVP interface; one
// digest context is made per batch and reused for every row. HASH_CODE(x): the INT hash
// of any value, which split distinct aggregation (optimizer/split_distinct.cpp) buckets by.
#include <openssl/evp.h>

#include <memory>

#include <fmt/format.h>

#include "clink/sql/common/column_key.hpp"
#include "kernel_util.hpp"

namespace clink::sql {

namespace {

using kernels::for_each_valid_row;

struct MdCtxDeleter {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};
using MdCtx = std::unique_ptr<EVP_MD_CTX, MdCtxDeleter>;

MdCtx new_ctx(const char* fn) {
  MdCtx ctx(EVP_MD_CTX_new());
  if (!ctx) throw SqlRuntimeError(fmt::format("{}: cannot allocate a digest context", fn));
  return ctx;
}

// Appends the digest of `s` as lowercase hex to the output arena and ends the row.
void append_hex_digest(EVP_MD_CTX* ctx, const EVP_MD* md, const char* fn, std::string_view s, Column& out) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_DigestInit_ex(ctx, md, nullptr) != 1 || EVP_DigestUpdate(ctx, s.data(), s.size()) != 1 ||
      EVP_DigestFinal_ex(ctx, digest, &len) != 1)
    throw SqlRuntimeError(fmt::format("{}: the digest failed", fn));
  static constexpr char kHex[] = "0123456789abcdef";
  char hex[EVP_MAX_MD_SIZE * 2];
  for (unsigned int k = 0; k < len; ++k) {
    hex[2 * k] = kHex[digest[k] >> 4];
    hex[2 * k + 1] = kHex[digest[k] & 15];
  }
  out.arena().append(hex, len * 2);
  out.commit_string();
}

void add_digest(FunctionRegistry& r, const char* name, const EVP_MD* (*md)()) {
  r.add_fixed(name, {LogicalType::string()}, LogicalType::string().not_null(),
              [name, md](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
                MdCtx c = new_ctx(name);
                const EVP_MD* m = md();
                out.arena().reserve(ctx.rows * static_cast<std::size_t>(EVP_MD_get_size(m)) * 2);
                for_each_valid_row(ctx, out, [&](std::size_t i) {
                  append_hex_digest(c.get(), m, name, a[0].column->string_at(a[0].row(i)), out);
                });
              });
}

const EVP_MD* sha2_for_bits(std::int64_t bits) {
  switch (bits) {
    case 224: return EVP_sha224();
    case 256: return EVP_sha256();
    case 384: return EVP_sha384();
    case 512: return EVP_sha512();
    default: return nullptr;
  }
}

// HASH_CODE(x): FNV-1a of the value's key bytes (the encoding keyed state uses, so equal
// values of any type hash alike), mixed and folded to 32 bits. Stable across releases: a
// split aggregate's partial state is keyed by these buckets in checkpoints. Flink's
// internal HASH_CODE is Java's hashCode(); only the spread matters to its one caller, split
// distinct aggregation's MOD(HASH_CODE(x), buckets), not the exact values.
std::optional<ResolvedFunction> resolve_hash_code(std::span<const LogicalType> args) {
  if (args.size() != 1 || args[0].is(TypeKind::kNull)) return std::nullopt;
  ResolvedFunction f;
  f.name = "HASH_CODE";
  f.arg_types.assign(args.begin(), args.end());
  f.return_type = LogicalType::int_type().with_nullable(args[0].nullable());
  f.kernel = [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
    std::string key;  // reused: one allocation per batch at most
    auto* values = out.values<std::int32_t>();
    for (std::size_t i = 0; i < ctx.rows; ++i) {
      if (!ctx.args_valid_at(i)) {
        values[i] = 0;
        continue;
      }
      key.clear();
      append_key_value(*a[0].column, a[0].row(i), key);
      std::uint64_t h = 0xcbf29ce484222325ULL;
      for (unsigned char b : key) h = (h ^ b) * 0x100000001b3ULL;
      h ^= h >> 33;  // murmur3's finaliser: FNV's low bits alone spread poorly
      h *= 0xff51afd7ed558ccdULL;
      h ^= h >> 33;
      values[i] = static_cast<std::int32_t>(static_cast<std::uint32_t>(h ^ (h >> 32)));
    }
  };
  return f;
}

}  // namespace

void register_hash_functions(FunctionRegistry& r) {
  r.add_scalar("HASH_CODE", "HASH_CODE(ANY) -> INT", &resolve_hash_code);
  add_digest(r, "MD5", &EVP_md5);
  add_digest(r, "SHA1", &EVP_sha1);
  add_digest(r, "SHA224", &EVP_sha224);
  add_digest(r, "SHA256", &EVP_sha256);
  add_digest(r, "SHA384", &EVP_sha384);
  add_digest(r, "SHA512", &EVP_sha512);
  // SHA2(s, bits): bits 224, 256, 384 or 512; any other length fails as Flink's
  // MessageDigest.getInstance("SHA-" + bits) does.
  r.add_fixed("SHA2", {LogicalType::string(), LogicalType::int_type()}, LogicalType::string().not_null(),
              [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
                MdCtx c = new_ctx("SHA2");
                for_each_valid_row(ctx, out, [&](std::size_t i) {
                  std::int32_t bits = a[1].column->values<std::int32_t>()[a[1].row(i)];
                  const EVP_MD* m = sha2_for_bits(bits);
                  if (m == nullptr) {
                    if (!ctx.is_active(i)) {
                      out.append_null();
                      return;
                    }
                    throw SqlRuntimeError(
                        fmt::format("SHA2: unsupported hash length {} (expected 224, 256, 384 or 512)", bits));
                  }
                  append_hex_digest(c.get(), m, "SHA2", a[0].column->string_at(a[0].row(i)), out);
                });
              });
}

}  // namespace clink::sql
