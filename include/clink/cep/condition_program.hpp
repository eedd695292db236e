#pragma once
// The conditions of one compiled NFA, flattened for evaluation per event. Every
// transition's condition tree (And / Or / Not over simple and iterative conditions)
// becomes a root index into one array of operations, and every distinct simple
// condition a leaf whose result is remembered for the event being processed: the NFA
// asks the same conditions for each partial match of a key (a take condition and its
// negation as the ignore condition, the begin condition in the start state), and a
// simple condition depends on the event only, so it runs once per event. Iterative
// conditions depend on the partial match and run every time they are asked.
//
// The Condition trees are shared (a pattern may be compiled by several subtasks at
// once) and only read; the memo belongs to this object (one NFA, one thread).
#include <cstdint>
#include <vector>

#include "clink/cep/condition.hpp"

namespace clink::cep {

template <class T>
class ConditionProgram {
 public:
  static constexpr std::int32_t kAlways = -1;

  // Adds a condition tree (null: any event); returns its root for evaluate().
  std::int32_t add(const Condition<T>* c) {
    if (!c || c->kind == Condition<T>::Kind::kTrue) return kAlways;
    Op op;
    op.kind = c->kind;
    switch (c->kind) {
      case Condition<T>::Kind::kSimple:
      case Condition<T>::Kind::kIterative: op.a = leaf(c); break;
      case Condition<T>::Kind::kAnd:
      case Condition<T>::Kind::kOr:
        op.a = add(c->left.get());
        op.b = add(c->right.get());
        break;
      case Condition<T>::Kind::kNot: op.a = add(c->left.get()); break;
      case Condition<T>::Kind::kTrue: break;
    }
    ops_.push_back(op);
    return static_cast<std::int32_t>(ops_.size()) - 1;
  }

  // Whether the tree has simple conditions only (needs no MatchContext).
  bool is_simple(std::int32_t root) const {
    if (root == kAlways) return true;
    const Op& op = ops_[static_cast<std::size_t>(root)];
    switch (op.kind) {
      case Condition<T>::Kind::kIterative: return false;
      case Condition<T>::Kind::kAnd:
      case Condition<T>::Kind::kOr: return is_simple(op.a) && is_simple(op.b);
      case Condition<T>::Kind::kNot: return is_simple(op.a);
      default: return true;
    }
  }

  // The leaf when the tree is one simple condition (`negated`: its negation), else -1.
  std::int32_t simple_leaf(std::int32_t root, bool negated) const {
    if (root == kAlways) return -1;
    const Op* op = &ops_[static_cast<std::size_t>(root)];
    if (negated) {
      if (op->kind != Condition<T>::Kind::kNot || op->a == kAlways) return -1;
      op = &ops_[static_cast<std::size_t>(op->a)];
    }
    return op->kind == Condition<T>::Kind::kSimple ? op->a : -1;
  }
  // A simple condition's result for the event (remembered until next_event()).
  bool simple(std::int32_t leaf, const T& v) {
    Leaf& l = leaves_[static_cast<std::size_t>(leaf)];
    if (l.epoch != epoch_) {
      l.value = l.condition->simple(v);
      l.epoch = epoch_;
    }
    return l.value;
  }

  // Forgets the remembered results: call before each event.
  void next_event() {
    if (++epoch_ == 0) {  // wrapped: no stale stamp may match
      for (auto& l : leaves_) l.epoch = 0;
      epoch_ = 1;
    }
  }

  // `context()` yields the MatchContext<T> for iterative conditions (built on demand).
  // The usual shapes (a simple condition, its negation) are evaluated inline; other trees
  // walk the operations.
  template <class ContextFn>
  bool evaluate(std::int32_t root, const T& v, ContextFn&& context) {
    if (root == kAlways) return true;
    const Op& op = ops_[static_cast<std::size_t>(root)];
    if (op.kind == Condition<T>::Kind::kSimple) return simple(op.a, v);
    if (op.kind == Condition<T>::Kind::kNot && op.a != kAlways) {  // NOT(any event): no inner op
      const Op& inner = ops_[static_cast<std::size_t>(op.a)];
      if (inner.kind == Condition<T>::Kind::kSimple) return !simple(inner.a, v);
    }
    return evaluate_tree(root, v, context);
  }

 private:
  template <class ContextFn>
  bool evaluate_tree(std::int32_t root, const T& v, ContextFn& context) {
    if (root == kAlways) return true;
    const Op& op = ops_[static_cast<std::size_t>(root)];
    switch (op.kind) {
      case Condition<T>::Kind::kSimple: return simple(op.a, v);
      case Condition<T>::Kind::kIterative:
        return leaves_[static_cast<std::size_t>(op.a)].condition->iterative(v, context());
      case Condition<T>::Kind::kAnd: return evaluate_tree(op.a, v, context) && evaluate_tree(op.b, v, context);
      case Condition<T>::Kind::kOr: return evaluate_tree(op.a, v, context) || evaluate_tree(op.b, v, context);
      case Condition<T>::Kind::kNot: return !evaluate_tree(op.a, v, context);
      case Condition<T>::Kind::kTrue: return true;
    }
    return false;
  }

  struct Op {
    typename Condition<T>::Kind kind = Condition<T>::Kind::kTrue;
    std::int32_t a = kAlways, b = kAlways;  // operands, or the leaf of a simple / iterative condition
  };
  struct Leaf {
    const Condition<T>* condition;
    std::uint32_t epoch = 0;
    bool value = false;
  };
  std::int32_t leaf(const Condition<T>* c) {
    for (std::size_t i = 0; i < leaves_.size(); ++i)
      if (leaves_[i].condition == c) return static_cast<std::int32_t>(i);
    leaves_.push_back(Leaf{c});
    return static_cast<std::int32_t>(leaves_.size()) - 1;
  }

  std::vector<Op> ops_;
  std::vector<Leaf> leaves_;
  std::uint32_t epoch_ = 1;
};

}  // namespace clink::cep
