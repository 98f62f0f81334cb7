// Event nodes and the per-worker pools they come from.
//
// In the parallel executor an event lives in one node from the moment its
// handler's emit() writes it until the handler of its target has run: the
// node travels through the target's inbox into its heap (NodeHeap) and is
// handled in place, so an event is written once and never copied again.
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <vector>

#include "seer/event.hpp"

namespace seer {

// Two cache lines: a node never shares a line with another node, so a
// producer writing one does not disturb a consumer reading its neighbour.
struct alignas(64) EventNode {
  Event event;
  EventNode* next = nullptr;  // inbox link, then free-list link
};
static_assert(sizeof(EventNode) == 128, "EventNode is two cache lines");

// Per-worker free list of nodes, grown in blocks, so that after warm-up a
// step allocates nothing; the blocks are freed only when every node is idle
// (drop_all(), when the env lets go of its events: ParallelExecutor::release_storage).
// Nodes migrate between pools (allocated by the producer, freed by whoever
// handled the event): fine, each pool is only touched by its own worker. Not
// thread-safe.
class NodePool {
 public:
  static constexpr std::size_t kBlock = 256;

  // A free node; allocates a block of kBlock nodes when none is left.
  EventNode* allocate() {
    if (free_ == nullptr) grow();
    EventNode* n = free_;
    free_ = n->next;
    --free_count_;
    return n;
  }
  // A free node holding a copy of `event` (allocate() + one copy).
  EventNode* allocate(const Event& event) {
    EventNode* n = allocate();
    n->event = event;
    return n;
  }
  // Takes n back (from any pool). Does not allocate.
  void release(EventNode* n) {
    n->next = free_;
    free_ = n;
    ++free_count_;
  }
  std::size_t free_count() const { return free_count_; }
  // Nodes in this pool's blocks, free or not.
  std::size_t capacity() const { return blocks_.size() * kBlock; }
  // Frees every block and forgets the free list. Only when no node of any
  // block is in use anywhere: nodes migrate between pools, so a caller
  // checks that across all the pools that trade nodes
  // (ParallelEngine::release_idle_nodes).
  void drop_all() {
    free_ = nullptr;
    free_count_ = 0;
    blocks_.clear();
  }
  // -- Moving every event out block by block (ParallelEngine::move_out_events),
  // between runs only. The blocks, to visit; free_block(i) frees one (its
  // nodes must be referenced nowhere: forget_free_list() first), drop_freed()
  // then forgets the freed ones.
  std::size_t blocks() const { return blocks_.size(); }
  EventNode* block(std::size_t i) const { return blocks_[i].get(); }
  void free_block(std::size_t i) { blocks_[i].reset(); }
  void forget_free_list() {
    free_ = nullptr;
    free_count_ = 0;
  }
  void drop_freed() {
    blocks_.erase(std::remove(blocks_.begin(), blocks_.end(), nullptr), blocks_.end());
  }
  // Moves up to n free nodes to `to`. Nodes migrate from the pools of
  // producers to those of consumers; without moving them back, a producer
  // keeps allocating blocks while a consumer's free list only grows.
  void give(NodePool& to, std::size_t n) {
    for (; n != 0 && free_ != nullptr; --n) to.release(allocate());
  }

 private:
  void grow() {
    blocks_.push_back(std::make_unique<EventNode[]>(kBlock));
    EventNode* block = blocks_.back().get();
    for (std::size_t i = 0; i < kBlock; ++i) release(&block[i]);
  }
  EventNode* free_ = nullptr;
  std::size_t free_count_ = 0;
  std::vector<std::unique_ptr<EventNode[]>> blocks_;
};

}  // namespace seer
