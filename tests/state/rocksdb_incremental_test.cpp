// RocksDB incremental checkpoints, shared files and their reference counting; memory
// snapshot compactness.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include <nlohmann/json.hpp>

#include "clink/state/keyed_state.hpp"
#include "clink/state/shared_state_registry.hpp"
#include "state_test_util.hpp"

namespace clink::test {
namespace {

void put_counters(KeyedStateBackend& b, StateId id, std::int64_t from, std::int64_t to, std::int64_t value) {
  std::string k, v;
  for (std::int64_t i = from; i < to; ++i) {
    k.clear();
    KeyCodec<std::int64_t>::encode(i, k);
    b.set_current_key(k);
    v.clear();
    StateCodec<std::int64_t>::encode(value + i, v);
    b.put(id, v);
  }
}

std::uint64_t new_bytes(const std::map<std::string, std::uint64_t>& before,
                        const std::map<std::string, std::uint64_t>& after) {
  std::uint64_t n = 0;
  for (const auto& [path, size] : after)
    if (!before.count(path)) n += size;
  return n;
}

TEST(RocksDbIncremental, SecondCheckpointAfterOnePercentChangeWritesLittle) {
  TempDir root;  // the checkpoint root: chk-N/ and shared/
  BackendMaker maker;
  maker.kind = "rocksdb";
  auto b = maker.make({0, 127});
  auto id = b->register_state("counter", StateKind::kValue);
  const std::int64_t n = 200'000;
  put_counters(*b, id, 0, n, 0);

  auto h1 = b->snapshot(1, root.path / "chk-1");
  b->notify_checkpoint_complete(1);
  auto after1 = files_under(root.path);
  std::uint64_t full = 0;
  for (const auto& [p, s] : after1) full += s;
  ASSERT_GT(full, 1'000'000u);
  EXPECT_FALSE(h1.description->at("shared").empty());

  // Change 1 % of the keys, spread over the key space.
  std::string k, v;
  for (std::int64_t i = 0; i < n; i += 100) put_counters(*b, id, i, i + 1, 1'000'000);
  auto h2 = b->snapshot(2, root.path / "chk-2");
  auto after2 = files_under(root.path);
  std::uint64_t written = new_bytes(after1, after2);
  EXPECT_LT(written, full / 20) << "incremental checkpoint wrote " << written << " of " << full << " bytes";

  // The second checkpoint references the first one's SST files.
  std::set<std::string> shared1, shared2;
  for (const auto& s : h1.description->at("shared")) shared1.insert(s.at("path").get<std::string>());
  for (const auto& s : h2.description->at("shared")) shared2.insert(s.at("path").get<std::string>());
  std::size_t reused = 0;
  for (const auto& p : shared2) reused += shared1.count(p);
  EXPECT_EQ(reused, shared1.size());
  EXPECT_GT(shared2.size(), shared1.size());

  // Restoring the second checkpoint gives the changed values.
  auto r = maker.make({0, 127});
  r->restore({h2});
  KeyedStateStore store(*r);
  auto& counter = store.get_state(ValueStateDescriptor<std::int64_t>{"counter"});
  r->set_current_key(encode_key<std::int64_t>(300));
  EXPECT_EQ(counter.value(), 1'000'300);
  r->set_current_key(encode_key<std::int64_t>(301));
  EXPECT_EQ(counter.value(), 301);
}

TEST(RocksDbIncremental, ARestoredBackendReferencesTheRestoredCheckpointsFiles) {
  TempDir root;
  BackendMaker maker;
  maker.kind = "rocksdb";
  auto b = maker.make({0, 127});
  auto id = b->register_state("counter", StateKind::kValue);
  put_counters(*b, id, 0, 50'000, 0);
  auto h1 = b->snapshot(1, root.path / "chk-1");
  b.reset();

  auto r = maker.make({0, 127});
  r->restore({h1});
  auto rid = r->register_state("counter", StateKind::kValue);
  auto before = files_under(root.path);
  put_counters(*r, rid, 0, 10, 5);
  auto h2 = r->snapshot(2, root.path / "chk-2");
  std::set<std::string> shared1;
  for (const auto& s : h1.description->at("shared")) shared1.insert(s.at("path").get<std::string>());
  std::size_t reused = 0;
  for (const auto& s : h2.description->at("shared")) reused += shared1.count(s.at("path").get<std::string>());
  EXPECT_EQ(reused, shared1.size());
  std::uint64_t full = 0;
  for (const auto& [p, size] : before) full += size;
  EXPECT_LT(new_bytes(before, files_under(root.path)), full / 20);
}

TEST(RocksDbIncremental, OnlyCompletedCheckpointsAreReused) {
  TempDir root;
  BackendMaker maker;
  maker.kind = "rocksdb";
  auto b = maker.make({0, 127});
  auto id = b->register_state("counter", StateKind::kValue);
  put_counters(*b, id, 0, 1000, 0);
  auto h1 = b->snapshot(1, root.path / "chk-1");  // never confirmed
  put_counters(*b, id, 0, 10, 5);
  auto h2 = b->snapshot(2, root.path / "chk-2");
  std::set<std::string> shared1;
  for (const auto& s : h1.description->at("shared")) shared1.insert(s.at("path").get<std::string>());
  for (const auto& s : h2.description->at("shared")) EXPECT_FALSE(shared1.count(s.at("path").get<std::string>()));
}

TEST(RocksDbIncremental, RegistryDeletesSharedFilesNoCheckpointReferences) {
  TempDir root;
  BackendMaker maker;
  maker.kind = "rocksdb";
  auto b = maker.make({0, 127});
  auto id = b->register_state("counter", StateKind::kValue);
  SharedStateRegistry registry;
  put_counters(*b, id, 0, 5000, 0);
  auto h1 = b->snapshot(1, root.path / "chk-1");
  b->notify_checkpoint_complete(1);
  registry.register_checkpoint(1, {h1});
  put_counters(*b, id, 0, 50, 9);
  auto h2 = b->snapshot(2, root.path / "chk-2");
  b->notify_checkpoint_complete(2);
  registry.register_checkpoint(2, {h2});

  auto files1 = shared_state_files(h1);
  auto files2 = shared_state_files(h2);
  ASSERT_FALSE(files1.empty());
  for (const auto& f : files1) EXPECT_EQ(registry.reference_count(f), 2u);
  EXPECT_EQ(registry.file_count(), files2.size());

  // Discarding checkpoint 1 deletes nothing: checkpoint 2 references all its SSTs.
  EXPECT_TRUE(registry.release_checkpoint(1).empty());
  for (const auto& f : files2) EXPECT_TRUE(std::filesystem::exists(f));
  auto r = maker.make({0, 127});
  r->restore({h2});
  std::string out;
  r->set_current_key(encode_key<std::int64_t>(4999));
  EXPECT_TRUE(r->get(r->register_state("counter", StateKind::kValue), out));

  // An aborted checkpoint's own uploads go; referenced files stay.
  put_counters(*b, id, 100, 200, 1);
  auto h3 = b->snapshot(3, root.path / "chk-3");
  auto deleted = registry.discard_unregistered({h3});
  EXPECT_EQ(deleted.size(), shared_state_files(h3).size() - files2.size());
  for (const auto& f : files2) EXPECT_TRUE(std::filesystem::exists(f));

  auto gone = registry.release_checkpoint(2);
  EXPECT_EQ(gone.size(), files2.size());
  for (const auto& f : files2) EXPECT_FALSE(std::filesystem::exists(f));
  EXPECT_EQ(registry.file_count(), 0u);
}

TEST(RocksDbIncremental, NonIncrementalCheckpointsAreSelfContained) {
  TempDir root;
  BackendMaker maker;
  maker.kind = "rocksdb";
  maker.incremental = false;
  auto b = maker.make({0, 127});
  auto id = b->register_state("counter", StateKind::kValue);
  put_counters(*b, id, 0, 1000, 0);
  auto h = b->snapshot(1, root.path / "chk-1");
  EXPECT_TRUE(h.description->at("shared").empty());
  EXPECT_FALSE(std::filesystem::exists(root.path / "shared"));
  auto r = maker.make({0, 127});
  r->restore({h});
  std::string out;
  r->set_current_key(encode_key<std::int64_t>(999));
  ASSERT_TRUE(r->get(r->register_state("counter", StateKind::kValue), out));
  EXPECT_EQ(decode_state<std::int64_t>(out), 999);
}

TEST(MemorySnapshot, Int64CountersCostUnder32BytesPerKey) {
  TempDir root;
  BackendMaker maker;
  maker.kind = "memory";
  auto b = maker.make({0, 127});
  auto id = b->register_state("counter", StateKind::kValue);
  const std::int64_t n = 100'000;
  put_counters(*b, id, 0, n, 0);
  auto h = b->snapshot(1, root.path / "chk-1");
  auto bytes = h.description->at("size").get<std::uint64_t>();
  EXPECT_EQ(bytes, dir_bytes(root.path));
  EXPECT_EQ(h.description->at("entries").get<std::uint64_t>(), static_cast<std::uint64_t>(n));
  double per_key = static_cast<double>(bytes) / static_cast<double>(n);
  EXPECT_LT(per_key, 16.0) << per_key;  // key 8 + value <= 3 + 3 length bytes + ns 1
  EXPECT_EQ(h.description->at("offsets").size(), 129u);
}

}  // namespace
}  // namespace clink::test
