#pragma once
// postgres-cdc jobs for the tests: Flink SQL scripts run by the real `clink` binary in the
// background (print sink), against the fixture's PostgreSQL server, and their printed
// changelogs folded into tables.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "../support/clink_process.hpp"
#include "pg_test_env.hpp"

namespace clink::test {

// The options of a postgres-cdc table on the test server (`extra` appended as written).
inline std::string pg_cdc_options(const std::string& table, const std::string& slot, const std::string& extra = "") {
  return "'connector' = 'postgres-cdc', 'hostname' = '127.0.0.1', 'port' = '" + std::to_string(postgres_port()) +
         "', 'username' = 'postgres', 'password' = '', 'database-name' = 'postgres', 'schema-name' = 'public', "
         "'table-name' = '" + table + "', 'slot.name' = '" + slot + "', 'debezium.publication.name' = '" + slot + "'" +
         extra;
}

// Drops a test's replication slot and its publication (named as the slot by
// pg_cdc_options) once its reader is gone, so runs do not accumulate them.
inline void drop_pg_slot(const std::string& slot) {
  for (int i = 0; i < 100; ++i) {
    if (pg_query_value("SELECT count(*) FROM pg_replication_slots WHERE slot_name = '" + slot + "' AND active") == "0")
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  pg_exec("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '" + slot + "'");
  pg_exec("DROP PUBLICATION IF EXISTS " + slot);
}

// Waits up to `ms` for `pred`.
inline bool eventually(const std::function<bool()>& pred, int ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  return pred();
}

// The print sink's changelog lines ("+I[1, a]", ...) of an output.
inline std::vector<std::string> changelog_lines(const std::string& out) {
  std::vector<std::string> v;
  std::istringstream in(out);
  for (std::string l; std::getline(in, l);)
    if (l.size() > 3 && (l[0] == '+' || l[0] == '-') && l[2] == '[') v.push_back(l);
  return v;
}

// "+U[a, 1, 2]" -> "a|1|2" (pg_query_rows' form).
inline std::string changelog_row(const std::string& line) {
  std::string body = line.substr(3, line.size() - 4);
  return std::regex_replace(body, std::regex(", "), "|");
}

// Folds changelogs (in order) into the rows they leave, keyed by the first `key_columns`
// printed columns: +I / +U set the key's row, -D removes it, -U is skipped (the +U that
// follows replaces it). Sorted, as pg_query_rows. A restored job prints again what came
// after its checkpoint, and the last row per key is what an upsert sink would hold.
inline std::vector<std::string> fold_upserts(const std::vector<std::string>& lines, int key_columns) {
  std::map<std::string, std::string> rows;
  for (const auto& l : lines) {
    std::string row = changelog_row(l);
    std::string key;
    std::size_t pos = 0;
    for (int k = 0; k < key_columns; ++k) {
      auto bar = row.find('|', pos);
      pos = bar == std::string::npos ? row.size() : bar + 1;
    }
    key = row.substr(0, pos);
    const std::string kind = l.substr(0, 2);
    if (kind == "+I" || kind == "+U") rows[key] = row;
    else if (kind == "-D") rows.erase(key);
  }
  std::vector<std::string> out;
  for (auto& [k, v] : rows) out.push_back(v);
  return out;
}

// Folds a retract changelog into the multiset of rows it leaves (sorted).
inline std::vector<std::string> fold_retractions(const std::vector<std::string>& lines) {
  std::multiset<std::string> rows;
  for (const auto& l : lines) {
    std::string row = changelog_row(l);
    if (l[0] == '+') rows.insert(row);
    else if (auto it = rows.find(row); it != rows.end()) rows.erase(it);
    else rows.insert("(retraction of a row never added) " + row);
  }
  return {rows.begin(), rows.end()};
}

class PostgresCdcTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / unique_pg_table("clink-pgcdc");
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    jobs_.clear();  // SIGKILLs what still runs
    for (const auto& s : slots_) drop_pg_slot(s);
    std::filesystem::remove_all(dir_);
  }

  // A slot name for this test, dropped at its end.
  std::string slot(const std::string& base) {
    slots_.push_back(unique_pg_table(base));
    return slots_.back();
  }
  std::filesystem::path script(const std::string& sql, const std::string& name = "job.sql") {
    auto p = dir_ / name;
    std::ofstream(p) << sql;
    return p;
  }
  // `clink run <script> <args>` in the background.
  ClinkProcess& start(const std::filesystem::path& sql, std::vector<std::string> args = {}) {
    args.insert(args.begin(), sql.string());
    args.insert(args.begin(), "run");
    auto run_dir = dir_ / ("run" + std::to_string(jobs_.size()));
    std::filesystem::create_directories(run_dir);
    jobs_.push_back(std::make_unique<ClinkProcess>(args, run_dir));
    return *jobs_.back();
  }
  // Waits until the job printed `n` changelog lines (or it exited).
  static bool printed(ClinkProcess& job, std::size_t n, int ms = 30000) {
    return eventually([&] { return changelog_lines(job.out()).size() >= n || job.wait_for(0).has_value(); }, ms) &&
           changelog_lines(job.out()).size() >= n;
  }

  std::filesystem::path dir_;
  std::vector<std::string> slots_;
  std::vector<std::unique_ptr<ClinkProcess>> jobs_;
};

}  // namespace clink::test
