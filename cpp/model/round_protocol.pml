/* The parallel executor's round protocol (cpp/src/parallel_engine.cpp,
 * local_queue.hpp, wake_calendar.hpp, executive_list.hpp), checked with spin
 * over small bounds: 2 workers, 3 entities (0 and 1 in worker 0's slice, 2 in
 * worker 1's), 5 events (3 at the start, 2 sent while handling), horizons
 * 1, 2, 3 with lookahead 1 (3 rounds).
 *
 * What is modelled, at the atomicity of the C++:
 *   push_remote   the node joins the inbox; then the inbox bound is lowered
 *                 (a CAS min); a push that lowered it wakes the owner: a
 *                 notice into the sender's outbox of this phase's parity.
 *   drain         unless inbox and bound are both empty: reset the bound,
 *                 then take the inbox into the heap; handle the heap's events
 *                 before the horizon in time order; a wake at the new heap top
 *                 (the owner's calendar, or a notice when a thief drained).
 *   round         each worker absorbs the previous phase's notices for its
 *                 slice, takes its calendar entries before the horizon, pushes
 *                 those entities onto its executive list (once each: a flag),
 *                 seals it, drains it, then steals from the other list once
 *                 sealed (or gives up waiting: the owner drains it anyway);
 *                 the barrier's last arriver computes LB and the next horizon.
 * Checked: every event is handled once (never twice), before its round's
 * horizon, in time order per entity; no entity is held by two workers; every
 * event left pending at the end is covered by a wake entry at or before its
 * time; every round ends (no invalid end state: spin -a, no deadlock).
 * Planted bugs (each must make the check fail, `make model-check` shows it):
 *   -DDROP_NOTICE   a cross-slice wake is not sent
 *   -DSTALE_BOUND   drain skips the bound's reset when the inbox is empty
 */

#define W 2
#define E 3
#define NEV 5
#define TMAX 6        /* times 0 .. TMAX-1 */
#define INF 9
#define L 1
#define T_END 3

#define FREE 0
#define INBOX 1
#define HEAP 2
#define DONE 3

#define owner(x) ((x) < 2 -> 0 : 1)

byte ev_state[NEV];
byte ev_time[NEV];
byte ev_target[NEV];
byte handled[NEV];
byte next_free = 3;          /* events 3.. are sent while handling */

byte bound[E];               /* inbox bound (INF: none) */
byte cal[E * TMAX];          /* owner-private wake entries: count per (entity, time) */
byte ob[2 * E * TMAX];       /* notices: count per (parity, entity, time) */
byte last_time[E];           /* time of the entity's last handled event */
byte holders[E];
bool queued[E];              /* executive-list flags */

byte list[W * E];            /* executive lists: entity ids */
byte tail[W];
byte head[W];
bool sealed[W];
byte wmin[W];                /* per worker: earliest pending time seen */

byte horizon = 1;
byte phase = 0;
bool finished = false;
byte arrived = 0;
byte generation = 0;
byte rounds = 0;

#define CAL(e, t) cal[(e) * TMAX + (t)]
#define OB(p, e, t) ob[((p) * E + (e)) * TMAX + (t)]

inline wake(we, wt) {
  if
  :: owner(we) == me -> CAL(we, wt)++
  :: else ->
#ifdef DROP_NOTICE
     skip
#else
     OB(phase % 2, we, wt)++
#endif
  fi
}

inline push_remote(pe, pt) {
  atomic { ev_time[i] = pt; ev_target[i] = pe; ev_state[i] = INBOX };
  atomic {
    if
    :: pt < bound[pe] -> bound[pe] = pt; lowered = true
    :: else -> lowered = false
    fi
  };
  if
  :: lowered -> atomic { wake(pe, pt) }
  :: else -> skip
  fi;
  atomic { if :: pt < wmin[me] -> wmin[me] = pt :: else -> skip fi }
}

inline inbox_empty(ie, result) {
  result = true;
  k = 0;
  do
  :: k < NEV -> if :: ev_state[k] == INBOX && ev_target[k] == ie -> result = false :: else -> skip fi; k++
  :: else -> break
  od
}

inline heap_top(he, best, hat) {
  best = INF; hat = NEV; k = 0;
  do
  :: k < NEV ->
     if
     :: ev_state[k] == HEAP && ev_target[k] == he && ev_time[k] < best -> best = ev_time[k]; hat = k
     :: else -> skip
     fi;
     k++
  :: else -> break
  od
}

inline drain_entity() {
  atomic { holders[e]++; assert(holders[e] == 1) };
  /* drain(): skip only when the inbox and the bound are both empty */
  atomic {
    inbox_empty(e, none);
#ifdef STALE_BOUND
    skip_drain = none
#else
    skip_drain = none && bound[e] == INF
#endif
  };
  if
  :: !skip_drain ->
     bound[e] = INF;
     atomic {
       k = 0;
       do
       :: k < NEV -> if :: ev_state[k] == INBOX && ev_target[k] == e -> ev_state[k] = HEAP :: else -> skip fi; k++
       :: else -> break
       od
     }
  :: else -> skip
  fi;
  /* handle the heap's events before the horizon, in time order */
  do
  :: atomic { heap_top(e, top, at) };
     if
     :: top < horizon ->
        atomic {
          assert(handled[at] == 0);
          assert(top >= last_time[e]);
          handled[at] = 1; ev_state[at] = DONE; last_time[e] = top
        };
        /* maybe send one event to another entity, at now + L or later */
        if
        :: atomic { next_free < NEV -> i = next_free; next_free++ };
           if
           :: target = (e + 1) % E
           :: target = (e + 2) % E
           fi;
           if
           :: t = top + L
           :: t = top + L + 1
           fi;
           push_remote(target, t)
        :: true -> skip
        fi
     :: else -> break
     fi
  od;
  atomic {
    heap_top(e, top, at);
    if :: top < wmin[me] -> wmin[me] = top :: else -> skip fi;
    if :: top < INF -> wake(e, top) :: else -> skip fi
  };
  atomic { holders[e]--; queued[e] = false }
}

inline drain_list(v) {
  do
  :: atomic { claim = head[(v)]; head[(v)]++ };
     if
     :: claim < tail[(v)] -> e = list[(v) * E + claim]; drain_entity()
     :: else -> break
     fi
  od
}

inline end_round() {
  lb = wmin[0];
  if :: wmin[1] < lb -> lb = wmin[1] :: else -> skip fi;
  if
  :: lb >= T_END -> finished = true
  :: else ->
     horizon = lb + L;
     if :: horizon > T_END -> horizon = T_END :: else -> skip fi;
     rounds++
  fi;
  k = 0;
  do
  :: k < W -> tail[k] = 0; head[k] = 0; sealed[k] = false; k++
  :: else -> break
  od;
  phase++
}

proctype Worker(byte me) {
  byte k, e, t, i, target, top, at, claim, lb, gen, prev;
  bool lowered, none, skip_drain;
  do
  :: finished -> break
  :: else ->
     /* collect: absorb the previous phase's notices, take entries before
        the horizon, push those entities once each, seal */
     atomic {
       prev = (phase + 1) % 2;
       wmin[me] = INF;
       e = 0;
       do
       :: e < E ->
          if
          :: owner(e) == me ->
             t = 0;
             do
             :: t < TMAX -> CAL(e, t) = CAL(e, t) + OB(prev, e, t); OB(prev, e, t) = 0; t++
             :: else -> break
             od;
             none = true;
             t = 0;
             do
             :: t < TMAX ->
                if
                :: CAL(e, t) > 0 && t < horizon -> CAL(e, t) = 0; none = false
                :: CAL(e, t) > 0 && t >= horizon && t < wmin[me] -> wmin[me] = t
                :: else -> skip
                fi;
                t++
             :: else -> break
             od;
             if
             :: !none && !queued[e] -> queued[e] = true; list[me * E + tail[me]] = e; tail[me]++
             :: else -> skip
             fi
          :: else -> skip
          fi;
          e++
       :: else -> break
       od;
       sealed[me] = true
     };
     drain_list(me);
     /* steal from the other list once it is sealed, or give up waiting */
     if
     :: sealed[1 - me] -> drain_list(1 - me)
     :: true -> skip
     fi;
     /* barrier; the last arriver ends the round */
     atomic {
       gen = generation;
       arrived++;
       if
       :: arrived == W -> end_round(); arrived = 0; generation++
       :: else -> skip
       fi
     };
     (generation != gen)
  od
}

init {
  byte k, e, t;
  bool covered;
  atomic {
    /* pending at the step's start: entity 0 at 0 and 2, entity 2 at 0 */
    ev_time[0] = 0; ev_target[0] = 0; ev_state[0] = HEAP;
    ev_time[1] = 2; ev_target[1] = 0; ev_state[1] = HEAP;
    ev_time[2] = 0; ev_target[2] = 2; ev_state[2] = HEAP;
    e = 0;
    do
    :: e < E -> bound[e] = INF; e++
    :: else -> break
    od;
    /* the calendars as rebuilt from the queues: each entity's earliest */
    CAL(0, 0) = 1; CAL(2, 0) = 1;
    run Worker(0);
    run Worker(1)
  };
  (_nr_pr == 1);
  /* every event before the step's end was handled (once: asserted above);
     every later one is covered by a wake at or before its time */
  k = 0;
  do
  :: k < NEV ->
     if
     :: ev_state[k] != FREE && ev_time[k] < T_END -> assert(handled[k] == 1)
     :: ev_state[k] != FREE && ev_state[k] != DONE ->
        e = ev_target[k];
        covered = false;
        t = 0;
        do
        :: t <= ev_time[k] ->
           if :: CAL(e, t) > 0 || OB(0, e, t) > 0 || OB(1, e, t) > 0 -> covered = true :: else -> skip fi;
           t++
        :: else -> break
        od;
        assert(covered)
     :: else -> skip
     fi;
     k++
  :: else -> break
  od;
  assert(rounds <= T_END)
}
