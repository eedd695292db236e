#include "zk_session.hpp"

#define THREADED  // the multi-threaded client's synchronous API
#include <zookeeper/zookeeper.h>

#include <algorithm>
#include <mutex>

#include "clink/core/error.hpp"

namespace clink::cluster {

namespace {

int mode_flags(ZkMode mode) {
  switch (mode) {
    case ZkMode::Persistent: return ZOO_PERSISTENT;
    case ZkMode::Ephemeral: return ZOO_EPHEMERAL;
    case ZkMode::EphemeralSequential: return ZOO_EPHEMERAL_SEQUENTIAL;
  }
  return ZOO_PERSISTENT;
}

ZkState to_state(int state) {
  if (state == ZOO_CONNECTED_STATE) return ZkState::Connected;
  if (state == ZOO_CONNECTING_STATE || state == ZOO_ASSOCIATING_STATE) return ZkState::Connecting;
  if (state == ZOO_EXPIRED_SESSION_STATE) return ZkState::Expired;
  return ZkState::Other;
}

ZkEventType to_type(int type) {
  if (type == ZOO_SESSION_EVENT) return ZkEventType::Session;
  if (type == ZOO_CREATED_EVENT) return ZkEventType::Created;
  if (type == ZOO_DELETED_EVENT) return ZkEventType::Deleted;
  if (type == ZOO_CHANGED_EVENT) return ZkEventType::Changed;
  if (type == ZOO_CHILD_EVENT) return ZkEventType::Child;
  return ZkEventType::Other;
}

void quiet_client_log() {
  // The client logs on stderr, every failed connection attempt (dozens a second while a
  // server is down) among them; the HA services report what matters themselves, with the
  // path and the quorum.
  static std::once_flag once;
  std::call_once(once, [] { zoo_set_debug_level(static_cast<ZooLogLevel>(0)); });  // 0: off
}

}  // namespace

ZkSession::ZkSession(std::string quorum, std::chrono::milliseconds session_timeout,
                     std::chrono::milliseconds connect_timeout, EventSink sink)
    : quorum_(std::move(quorum)), sink_(std::move(sink)) {
  quiet_client_log();
  zh_ = zookeeper_init(quorum_.c_str(), &ZkSession::on_watch, static_cast<int>(session_timeout.count()), nullptr,
                       this, 0);
  if (zh_ == nullptr)
    throw ClinkError("high-availability.zookeeper.quorum: cannot connect to '" + quorum_ + "' (bad address?)");
  std::unique_lock lock(mutex_);
  bool up = state_changed_.wait_for(lock, connect_timeout, [&] { return state_ == ZkState::Connected; });
  if (!up) {
    lock.unlock();
    zookeeper_close(zh_);
    zh_ = nullptr;
    throw ClinkError("high-availability.zookeeper.quorum: no ZooKeeper server at '" + quorum_ + "' answered within " +
                     std::to_string(connect_timeout.count()) +
                     " ms (high-availability.zookeeper.client.connection-timeout)");
  }
}

ZkSession::~ZkSession() {
  if (zh_ != nullptr) zookeeper_close(zh_);
}

void ZkSession::on_watch(_zhandle* /*zh*/, int type, int state, const char* path, void* ctx) {
  auto* self = static_cast<ZkSession*>(ctx);
  if (type == ZOO_SESSION_EVENT) {
    std::lock_guard lock(self->mutex_);
    self->state_ = to_state(state);
    self->state_changed_.notify_all();
  }
  if (self->sink_) self->sink_(to_type(type), to_state(state), path ? std::string(path) : std::string());
}

std::int64_t ZkSession::session_id() const { return zoo_client_id(zh_)->client_id; }

std::chrono::milliseconds ZkSession::negotiated_timeout() const {
  return std::chrono::milliseconds(zoo_recv_timeout(zh_));
}

bool ZkSession::expired() const {
  std::lock_guard lock(mutex_);
  return state_ == ZkState::Expired;
}

int ZkSession::get(const std::string& path, bool watch, std::string* data, ZkStat* stat) {
  // Most nodes are small; a larger one is read again with its size known.
  std::string buf(4096, '\0');
  for (;;) {
    int len = static_cast<int>(buf.size());
    struct Stat st {};
    int rc = zoo_get(zh_, path.c_str(), watch ? 1 : 0, buf.data(), &len, &st);
    if (rc != ZOK) return rc;
    if (st.dataLength > static_cast<std::int32_t>(buf.size())) {
      buf.assign(static_cast<std::size_t>(st.dataLength), '\0');
      continue;
    }
    if (data) data->assign(buf.data(), len < 0 ? 0 : static_cast<std::size_t>(len));
    if (stat) *stat = ZkStat{st.version, st.ephemeralOwner, st.numChildren};
    return ZOK;
  }
}

int ZkSession::exists(const std::string& path, bool watch, ZkStat* stat) {
  struct Stat st {};
  int rc = zoo_exists(zh_, path.c_str(), watch ? 1 : 0, &st);
  if (rc == ZOK && stat) *stat = ZkStat{st.version, st.ephemeralOwner, st.numChildren};
  return rc;
}

int ZkSession::children(const std::string& path, bool watch, std::vector<std::string>* names) {
  struct String_vector v {};
  int rc = zoo_get_children(zh_, path.c_str(), watch ? 1 : 0, &v);
  if (rc != ZOK) return rc;
  names->clear();
  for (int i = 0; i < v.count; ++i) names->emplace_back(v.data[i]);
  deallocate_String_vector(&v);
  std::sort(names->begin(), names->end());
  return ZOK;
}

int ZkSession::create(const std::string& path, const std::string& data, ZkMode mode, std::string* created) {
  std::string buf(path.size() + 64, '\0');
  int rc = zoo_create(zh_, path.c_str(), data.data(), static_cast<int>(data.size()), &ZOO_OPEN_ACL_UNSAFE,
                      mode_flags(mode), buf.data(), static_cast<int>(buf.size()));
  if (rc == ZOK && created) *created = buf.c_str();
  return rc;
}

int ZkSession::remove(const std::string& path, std::int32_t version) { return zoo_delete(zh_, path.c_str(), version); }

int ZkSession::multi(const std::vector<ZkOp>& ops, int* failed) {
  *failed = -1;
  if (ops.empty()) return ZOK;
  std::vector<zoo_op_t> zops(ops.size());
  std::vector<zoo_op_result_t> results(ops.size());
  std::vector<std::string> created(ops.size());
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const ZkOp& op = ops[i];
    switch (op.kind) {
      case ZkOp::Kind::Create:
        created[i].assign(op.path.size() + 64, '\0');
        zoo_create_op_init(&zops[i], op.path.c_str(), op.data.data(), static_cast<int>(op.data.size()),
                           &ZOO_OPEN_ACL_UNSAFE, mode_flags(op.mode), created[i].data(),
                           static_cast<int>(created[i].size()));
        break;
      case ZkOp::Kind::Set:
        zoo_set_op_init(&zops[i], op.path.c_str(), op.data.data(), static_cast<int>(op.data.size()), op.version,
                        nullptr);
        break;
      case ZkOp::Kind::Delete: zoo_delete_op_init(&zops[i], op.path.c_str(), op.version); break;
      case ZkOp::Kind::Check: zoo_check_op_init(&zops[i], op.path.c_str(), op.version); break;
    }
  }
  int rc = zoo_multi(zh_, static_cast<int>(zops.size()), zops.data(), results.data());
  if (rc != ZOK) {
    // The ops after the failing one report ZRUNTIMEINCONSISTENCY; the first other error
    // is the cause.
    for (std::size_t i = 0; i < results.size(); ++i) {
      if (results[i].err != ZOK && results[i].err != ZRUNTIMEINCONSISTENCY) {
        *failed = static_cast<int>(i);
        return results[i].err;
      }
    }
  }
  return rc;
}

void ZkSession::ensure_path(const std::string& path) {
  if (exists(path, false) == ZOK) return;
  std::size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    std::string prefix = path.substr(0, pos);
    int rc = create(prefix, "", ZkMode::Persistent);
    if (rc != ZOK && rc != ZNODEEXISTS) throw ClinkError(error("create", prefix, rc));
  }
}

void ZkSession::remove_tree(const std::string& path) {
  std::vector<std::string> names;
  int rc = children(path, false, &names);
  if (rc == ZNONODE) return;
  if (rc != ZOK) throw ClinkError(error("list", path, rc));
  for (auto& n : names) remove_tree(path + "/" + n);
  rc = remove(path);
  if (rc != ZOK && rc != ZNONODE) throw ClinkError(error("delete", path, rc));
}

std::string ZkSession::error(const std::string& what, const std::string& path, int rc) const {
  return "ZooKeeper " + quorum_ + ": " + what + " " + path + ": " + zerror(rc);
}

bool ZkSession::is_no_node(int rc) { return rc == ZNONODE; }
bool ZkSession::is_node_exists(int rc) { return rc == ZNODEEXISTS; }
bool ZkSession::is_bad_version(int rc) { return rc == ZBADVERSION; }
bool ZkSession::is_session_lost(int rc) { return rc == ZSESSIONEXPIRED || rc == ZINVALIDSTATE || rc == ZCLOSING; }

}  // namespace clink::cluster
