// Stress test of LocalQueue (lock-free MPSC inbox + owner-private heap) and
// NodePool (per-thread free lists whose nodes migrate from producer to
// consumer).
//
// Each round, kProducers threads push events with unique (source, seq) ids
// into kQueues queues while one consumer thread per queue keeps draining its
// inbox and popping part of its heap. Then, with every thread joined
// (quiescent), the main thread checks the inbox bound against what is left in
// the inbox. At the end it drains everything and checks:
//   - every event arrived exactly once (count per id), uncorrupted, at the
//     queue it was pushed to;
//   - the heap pops in key order (strictly increasing within each batch of
//     pops between drains, and a final full drain is sorted);
//   - inbox_bound() <= the pushed time whenever read right after a
//     push_remote() returned and no drain overlapped the push (seqlock-style
//     epoch per queue); the consumer, before each drain, finds it <= the
//     time of every inbox event whose push has returned; and <= every inbox
//     time when quiescent;
//   - node accounting: nodes handed out by the producers' pools == nodes
//     returned to the consumers' pools, and those free lists hold exactly the
//     handed-out nodes, each once (no loss, no double release).
// Events are trivially copyable PODs (by design), so the node accounting,
// not an instrumented element type, is what checks construction/release
// balance.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>
#include <thread>
#include <unordered_set>
#include <vector>

#include "check.hpp"
#include "local_queue.hpp"
#include "seer/event.hpp"

namespace {

constexpr unsigned kProducers = 8;
constexpr unsigned kQueues = 3;
constexpr unsigned kRounds = 8;
constexpr unsigned kEventsPerProducerPerRound = 3000;
constexpr std::uint64_t kTotalPerProducer =
    static_cast<std::uint64_t>(kRounds) * kEventsPerProducerPerRound;
constexpr std::uint64_t kPayloadMagic = 0x9e3779b97f4a7c15ULL;

struct Payload {
  std::uint64_t check;  // source/seq checksum: catches torn or mixed copies
  std::uint64_t seq;
};

std::uint64_t id_of(const seer::Event& e) { return e.source * kTotalPerProducer + e.seq; }

// A NodePool whose hand-outs are counted and remembered (producer side).
struct CountingProducerPool {
  seer::NodePool pool;
  std::vector<const seer::EventNode*> handed_out;
  seer::EventNode* allocate() {
    seer::EventNode* n = pool.allocate();
    handed_out.push_back(n);
    return n;
  }
};

// Consumer-side state of one queue; touched by one thread at a time (the
// consumer during a round, the main thread between rounds).
struct Consumer {
  seer::NodePool pool;                  // popped nodes return here
  std::vector<std::uint32_t> count;     // per id, how many times popped
  std::uint64_t popped = 0;
  std::uint64_t popped_since_empty = 0;  // see scribble()
  std::vector<seer::EventNode*> scratch;
  std::mt19937_64 rng;
};

// Per queue: odd while the consumer is inside drain() (seqlock-style), so a
// producer can tell whether a drain may have reset the bound under it.
std::atomic<std::uint64_t> drain_epoch[kQueues];
std::atomic<bool> producers_done{false};
// Per producer: 1 + the seq of its last push_remote() that has returned.
std::atomic<std::uint64_t> completed[kProducers];

void check_event(const seer::Event& e, unsigned q) {
  const Payload& p = e.as<Payload>();
  if (e.target != q) FAIL("event delivered to the wrong queue", e.target, q);
  if (e.source >= kProducers || e.seq >= kTotalPerProducer) FAIL("bad id", e.source, e.seq);
  if (p.seq != e.seq || p.check != ((e.source * kPayloadMagic) ^ e.seq)) {
    FAIL("corrupted payload", e.source, e.seq);
  }
}

// Pops up to `limit` events; within the batch keys must strictly increase
// and whatever stays on top must come after the last one popped.
void pop_batch(seer::LocalQueue& queue, Consumer& c, unsigned q, std::size_t limit) {
  bool have_last = false;
  seer::Event last;
  for (std::size_t i = 0; i < limit && !queue.empty_local(); ++i) {
    const double top_time = queue.top_time();
    seer::EventNode* node = queue.pop();
    const seer::Event e = node->event;
    c.pool.release(node);  // as a worker does once the event is handled
    if (e.time != top_time) FAIL("pop() differs from top_time()");
    if (have_last && !seer::key_less(last, e))
      FAIL("heap popped out of key order", e.source, e.seq);
    check_event(e, q);
    const std::uint64_t id = id_of(e);
    if (id < c.count.size()) ++c.count[id];
    ++c.popped;
    ++c.popped_since_empty;
    last = e;
    have_last = true;
  }
  if (have_last && !queue.empty_local() && !seer::key_less(last, queue.top())) {
    FAIL("heap top precedes an event already popped");
  }
}

void drain(seer::LocalQueue& queue, Consumer& c, unsigned q) {
  drain_epoch[q].fetch_add(1, std::memory_order_seq_cst);  // odd: draining
  queue.drain();
  drain_epoch[q].fetch_add(1, std::memory_order_seq_cst);  // even: done
}

// Overwrites an event as a reusing worker would. Field by field: GCC expands
// a fixed-size memset into vector stores that TSAN does not instrument.
void poison(seer::Event& e) {
  e.time = -1.0;
  e.target = 0xA5A5A5A5u;
  e.source = 0xA5A5A5A5u;
  e.seq = ~0ULL;
}

// Reuses the nodes of the latest pops, as a worker's pool does when its
// handlers emit: a producer that still touched a node after pushing it
// would race with these writes (TSAN) or read poison. Called with an empty
// heap, so the free list holds every node popped so far and its top holds
// the `popped_since_empty` nodes popped since the heap was last empty
// (allocate-then-release-in-reverse keeps the list's order).
void scribble(Consumer& c) {
  std::vector<seer::EventNode*>& taken = c.scratch;
  taken.clear();
  for (std::uint64_t i = 0; i < c.popped_since_empty; ++i) {
    seer::EventNode* n = c.pool.allocate();
    poison(n->event);
    taken.push_back(n);
  }
  for (std::size_t i = taken.size(); i-- > 0;) c.pool.release(taken[i]);
  c.popped_since_empty = 0;
}

// With the heap empty, for_each() walks only the inbox. Every event there
// whose push_remote() has returned must be covered by inbox_bound(): its
// bound-lowering happened after the reset of the drain that preceded its
// push, and only lowerings follow until our next drain. (Walking the inbox
// while producers push is outside for_each()'s contract but memory-safe for
// the consumer: pushed nodes are immutable until it drains them.) This
// catches a drain that resets the bound after taking the inbox: a push in
// between would stay in the inbox, uncovered, until the next drain.
void check_bound_before_drain(const seer::LocalQueue& queue, unsigned q) {
  std::uint64_t done[kProducers];
  for (unsigned p = 0; p < kProducers; ++p) done[p] = completed[p].load(std::memory_order_acquire);
  const double bound = queue.inbox_bound();
  queue.for_each([&](const seer::Event& e) {
    if (e.source < kProducers && e.seq < done[e.source] && !(bound <= e.time)) {
      FAIL("inbox_bound() above a completed push still in the inbox", e.seq, q);
    }
  });
}

void consumer_main(seer::LocalQueue& queue, Consumer& c, unsigned q) {
  for (;;) {
    // Stop without a last drain: what the producers pushed since stays in the
    // inbox for the quiescent bound check.
    if (producers_done.load(std::memory_order_acquire)) return;
    if (queue.empty_local()) check_bound_before_drain(queue, q);
    drain(queue, c, q);
    // Half the time pop everything (then reuse the nodes), else a few.
    const bool all = c.rng() % 2 == 0;
    pop_batch(queue, c, q, all ? static_cast<std::size_t>(-1) : 1 + c.rng() % 64);
    if (queue.empty_local()) scribble(c);
    std::this_thread::yield();  // 2 cores, 11 threads: do not hog one
  }
}

void producer_main(seer::LocalQueue* queues, CountingProducerPool& pool, unsigned p,
                   unsigned round) {
  std::mt19937_64 rng(1000003ULL * p + round);
  for (unsigned i = 0; i < kEventsPerProducerPerRound; ++i) {
    const std::uint64_t seq = static_cast<std::uint64_t>(round) * kEventsPerProducerPerRound + i;
    const unsigned q = static_cast<unsigned>(rng() % kQueues);
    seer::EventNode* node = pool.allocate();
    seer::Event& e = node->event;
    // Few distinct times: many ties, so (source, seq) decides the order.
    e.time = static_cast<double>(rng() % 32) * 0.25;
    e.target = q;
    e.source = p;
    e.seq = seq;
    e.kind = 7;
    e.set_payload(Payload{(p * kPayloadMagic) ^ seq, seq});
    const double time = e.time;  // the node belongs to the consumer after the push
    const std::uint64_t epoch_before = drain_epoch[q].load(std::memory_order_seq_cst);
    queues[q].push_remote(node);
    const double bound = queues[q].inbox_bound();
    const std::uint64_t epoch_after = drain_epoch[q].load(std::memory_order_seq_cst);
    // No drain overlapped [push, read]: only lowering CASes touched the bound
    // since ours, so it must be <= our time.
    if (epoch_before == epoch_after && epoch_before % 2 == 0 && !(bound <= time)) {
      FAIL("inbox_bound() above a time just pushed", seq, p);
    }
    completed[p].store(seq + 1, std::memory_order_release);
    if ((i & 127) == 0) std::this_thread::yield();
  }
}

// A producer must not touch a node once push_remote() has pushed it: the
// consumer may drain it and its worker reuse it at once. In the stress test
// above the producers' acq_rel CASes make a dense happens-before web that
// hides such an access from TSAN, so here one producer and one consumer hand
// off through a relaxed flag (no happens-before beyond the queue's own), and
// the consumer rewrites the node the moment it has drained it.
void test_reuse_right_after_push() {
  constexpr int kHandoffs = 2000;
  seer::LocalQueue queue;
  seer::NodePool producer_pool, consumer_pool;
  std::atomic<int> pushed{0};
  std::thread producer([&] {
    for (int i = 0; i < kHandoffs; ++i) {
      seer::EventNode* node = producer_pool.allocate();
      node->event = seer::Event{};
      node->event.time = 1.0 + i;
      node->event.seq = static_cast<std::uint64_t>(i);
      queue.push_remote(node);
      pushed.store(i + 1, std::memory_order_relaxed);  // relaxed: see above
      while (pushed.load(std::memory_order_relaxed) != -(i + 1)) std::this_thread::yield();
    }
  });
  for (int i = 0; i < kHandoffs; ++i) {
    while (pushed.load(std::memory_order_relaxed) != i + 1) std::this_thread::yield();
    queue.drain();
    if (queue.empty_local()) {
      FAIL("handoff: event lost", i);
    } else {
      seer::EventNode* node = queue.pop();  // the node just drained
      if (node->event.seq != static_cast<std::uint64_t>(i)) FAIL("handoff: wrong event", i);
      poison(node->event);
      consumer_pool.release(node);
    }
    pushed.store(-(i + 1), std::memory_order_relaxed);
  }
  producer.join();
}

// publish_top()/earliest(), what the parallel executor's begin read reads: the heap's
// top as of the last publish_top() (not later heap operations), combined with
// the inbox bound, which producers lower at once; top_address() names the
// event pop() returns.
void test_published_top() {
  seer::LocalQueue queue;
  seer::NodePool pool;
  const double inf = std::numeric_limits<double>::infinity();
  auto event_at = [](double t, std::uint64_t seq) {
    seer::Event e{};
    e.time = t;
    e.seq = seq;
    return e;
  };
  if (queue.earliest() != inf || queue.published_top() != inf) FAIL("new queue: earliest not +inf");
  queue.push_local(event_at(5.0, 1), pool);
  queue.push_local(event_at(3.0, 2), pool);
  if (queue.earliest() != inf) FAIL("earliest moved before publish_top()");
  queue.publish_top();
  if (queue.earliest() != 3.0 || queue.published_top() != 3.0) FAIL("earliest != heap top");
  if (queue.top_address() == nullptr || queue.top_address()->seq != 2) FAIL("top_address()");
  seer::EventNode* node = pool.allocate();
  node->event = event_at(2.0, 3);
  queue.push_remote(node);
  if (queue.earliest() != 2.0) FAIL("earliest ignores the inbox bound");
  queue.drain();  // the inbox bound resets; the heap now holds 2.0, not yet copied
  if (queue.earliest() != 3.0) FAIL("earliest after drain, before publish_top()");
  queue.publish_top();
  auto pop_seq = [&] {
    seer::EventNode* n = queue.pop();
    const std::uint64_t seq = n->event.seq;
    pool.release(n);
    return seq;
  };
  if (queue.earliest() != 2.0 || pop_seq() != 3) FAIL("earliest after drain and publish_top()");
  if (pop_seq() != 2 || pop_seq() != 1) FAIL("heap pops out of key order");
  queue.publish_top();
  if (queue.earliest() != inf || queue.top_address() != nullptr) FAIL("emptied queue");
}

// clear() hands every node back, from the heap and from the inbox alike, and
// resets the inbox bound; push_local(event, pool) takes its node from the pool.
void test_clear_returns_every_node() {
  seer::LocalQueue queue;
  seer::NodePool pool;
  seer::Event e{};
  e.time = 4.0;
  pool.release(pool.allocate());  // the pool holds a block now
  const std::size_t free_before = pool.free_count();
  for (std::uint64_t i = 0; i < 3; ++i) {
    e.seq = i;
    queue.push_local(e, pool);
  }
  for (std::uint64_t i = 3; i < 5; ++i) {
    e.seq = i;
    queue.push_remote(pool.allocate(e));
  }
  if (pool.free_count() != free_before - 5 || queue.size() != 5) FAIL("push_local(event, pool)");
  queue.clear(pool);
  if (pool.free_count() != free_before) FAIL("clear() lost nodes", pool.free_count(), free_before);
  if (queue.size() != 0 || !queue.empty_local()) FAIL("clear() left events");
  if (queue.inbox_bound() != std::numeric_limits<double>::infinity())
    FAIL("clear() kept the bound");
}

// settle_inbox(t_begin): a bound below t_begin cannot be a pending event's
// (every one is at or after it), so the inbox is drained and the bound is
// exact again; a bound at or after t_begin is left alone.
void test_settle_inbox() {
  seer::LocalQueue queue;
  seer::NodePool pool;
  seer::Event e{};
  e.time = 7.0;
  queue.push_remote(pool.allocate(e));
  if (queue.settle_inbox(7.0) || queue.inbox_bound() != 7.0) FAIL("settled a bound at t_begin");
  if (!queue.settle_inbox(8.0)) FAIL("kept a bound below t_begin");
  if (queue.inbox_bound() != std::numeric_limits<double>::infinity() || queue.top_time() != 7.0) {
    FAIL("settle_inbox() did not drain the inbox into the heap");
  }
  queue.clear(pool);
}

}  // namespace

int main() {
  test_reuse_right_after_push();
  test_published_top();
  test_clear_returns_every_node();
  test_settle_inbox();

  seer::LocalQueue queues[kQueues];
  Consumer consumers[kQueues];
  CountingProducerPool producer_pools[kProducers];
  for (unsigned q = 0; q < kQueues; ++q) {
    consumers[q].count.assign(kProducers * kTotalPerProducer, 0);
    consumers[q].rng.seed(77 + q);
    if (queues[q].inbox_bound() != std::numeric_limits<double>::infinity()) {
      FAIL("empty queue's inbox_bound() is not +inf");
    }
  }

  for (unsigned round = 0; round < kRounds; ++round) {
    producers_done.store(false, std::memory_order_relaxed);
    std::vector<std::thread> consumer_threads, producer_threads;
    for (unsigned q = 0; q < kQueues; ++q) {
      consumer_threads.emplace_back(consumer_main, std::ref(queues[q]), std::ref(consumers[q]), q);
    }
    for (unsigned p = 0; p < kProducers; ++p) {
      producer_threads.emplace_back(producer_main, queues, std::ref(producer_pools[p]), p, round);
    }
    for (auto& t : producer_threads) t.join();
    producers_done.store(true, std::memory_order_release);
    for (auto& t : consumer_threads) t.join();

    // Quiescent: empty each heap, then every event left is in the inbox and
    // the bound must not exceed any of their times.
    for (unsigned q = 0; q < kQueues; ++q) {
      pop_batch(queues[q], consumers[q], q, static_cast<std::size_t>(-1));
      double inbox_min = std::numeric_limits<double>::infinity();
      queues[q].for_each([&](const seer::Event& e) { inbox_min = std::min(inbox_min, e.time); });
      if (!(queues[q].inbox_bound() <= inbox_min)) {
        FAIL("quiescent inbox_bound() above the earliest inbox time", round, q);
      }
    }
  }

  // Final drain on the main thread: everything must come out sorted.
  std::uint64_t total_popped = 0;
  for (unsigned q = 0; q < kQueues; ++q) {
    queues[q].drain();
    pop_batch(queues[q], consumers[q], q, static_cast<std::size_t>(-1));
    if (queues[q].size() != 0 || !queues[q].empty_local()) FAIL("queue not empty at the end", q);
    total_popped += consumers[q].popped;
  }

  // Exactly once per id.
  const std::uint64_t total = kProducers * kTotalPerProducer;
  std::uint64_t missing = 0, duplicated = 0;
  for (std::uint64_t id = 0; id < total; ++id) {
    std::uint32_t n = 0;
    for (unsigned q = 0; q < kQueues; ++q) n += consumers[q].count[id];
    if (n == 0) ++missing;
    if (n > 1) ++duplicated;
  }
  if (missing != 0) FAIL("events lost", missing);
  if (duplicated != 0) FAIL("events duplicated", duplicated);
  if (total_popped != total) FAIL("popped count != pushed count", total_popped, total);

  // Node accounting: every node handed out was returned exactly once.
  std::unordered_set<const seer::EventNode*> out;
  std::uint64_t handed_out = 0;
  for (auto& p : producer_pools) {
    handed_out += p.handed_out.size();
    for (const seer::EventNode* n : p.handed_out) {
      if (!out.insert(n).second) FAIL("a producer pool handed out a node twice");
    }
  }
  if (handed_out != total) FAIL("nodes handed out != events pushed", handed_out, total);
  // The consumers' pools never grew: their free lists are exactly the
  // returned nodes. Take back `total` nodes from them: each must be one of
  // the handed-out nodes, none twice; the next one must come from a new block.
  std::unordered_set<const seer::EventNode*> back;
  std::uint64_t returned = 0;
  for (unsigned q = 0; q < kQueues; ++q) {
    // How many nodes this consumer got back: the events it took in, i.e.
    // those popped from its queue (every event went through the inbox).
    const std::uint64_t n = consumers[q].popped;
    for (std::uint64_t i = 0; i < n; ++i) {
      const seer::EventNode* node = consumers[q].pool.allocate();
      if (out.count(node) == 0) FAIL("consumer free list holds a node never handed out", q, i);
      if (!back.insert(node).second) FAIL("node returned twice", q, i);
    }
    returned += n;
    const seer::EventNode* fresh = consumers[q].pool.allocate();
    if (out.count(fresh) != 0 || back.count(fresh) != 0) {
      FAIL("consumer free list holds more nodes than events it drained", q);
    }
  }
  if (returned != handed_out || back.size() != out.size()) {
    FAIL("nodes returned != nodes handed out", returned, handed_out);
  }

  std::printf("test_local_queue: %llu events, %u producers, %u queues\n",
              static_cast<unsigned long long>(total), kProducers, kQueues);
  return check::report("test_local_queue");
}
