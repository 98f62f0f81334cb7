/* The parallel executor's round protocol, as a model for the spin checker.
 *
 * What it models (cpp/src/parallel_engine.cpp): W workers, each owning a
 * slice of E entities, step through R rounds. In a round a worker
 *   1. takes the wake notices the other workers sent it last round (the
 *      outbox of last round's parity) into its wake calendar;
 *   2. lists the entities of its calendar with an entry due this round on its
 *      executive list, once each, and seals the list;
 *   3. drains its own list, then steals from the others' sealed lists (or
 *      gives up waiting for a seal: every owner drains its own list);
 *      draining an entity handles its events due this round and may send
 *      events due next round, to itself (its heap: no notice) or to another
 *      entity (a wake notice to the target's owner: into the drainer's own
 *      calendar when it owns the target, else into its outbox of this
 *      round's parity); then it notes where the drained entity stands (the
 *      same way, as for a cross event);
 *   4. arrives at the barrier; the last one to arrive resets the lists and
 *      starts the next round.
 * Times are rounds: an event due in round r is below that round's horizon
 * and at or after the last one's, which is what the lookahead guarantees of
 * every cross event (sent at >= now + L >= the next horizon's start).
 * Not modelled here: the inbox's CAS push and the heap (the C++ tests and
 * TSan cover those), the LB computation (rounds are fixed).
 *
 * Checked (make model-check): no event is lost or handled twice (each is
 * handled in the round it is due, exactly once), no entity is held by two
 * workers at once, no list slot is read before its owner sealed the list,
 * and every round ends (no invalid end state). Built with -DDROP_NOTICE, a
 * worker forgets the notice of a cross event to another worker's entity;
 * with -DSAME_PARITY, owners take the outbox senders are writing: the
 * check must fail with either.
 */

#ifndef W
#define W 2   /* workers */
#endif
#ifndef E
#define E 3   /* entities */
#endif
#ifndef R
#define R 3   /* rounds */
#endif
#define NONE 255
#ifndef CAP
#define CAP 2 /* events pending per entity and round, at most (keeps the state space small) */
#endif

/* The outbox parity an owner takes at the start of a round: last round's.
 * Built with -DSAME_PARITY, this round's (a planted bug: it races with the
 * senders of this round and misses what they send after it looked). */
#ifdef SAME_PARITY
#define TAKEN (my_round % 2)
#else
#define TAKEN ((my_round - 1) % 2)
#endif

#define OWNER(e) ((((e) + 1) * W - 1) / E)
#define AT(e, r) ((e) * R + (r))

byte round = 0;             /* the round in progress */
byte arrived = 0;           /* workers at the barrier */

byte pending[E * R];        /* events of entity e due in round r, not yet handled */
byte handled[E * R];        /* of those, handled */
byte sent[E * R];           /* events of entity e due in round r, ever created */
byte holder[E];             /* the worker draining e, or NONE */

/* Per worker: its calendar (entity, round) -> entries, its outbox per
 * parity, its executive list. */
byte calendar[W * E * R];
byte outbox[W * 2 * E * R];
byte slot[W * E];
byte tail[W];
byte head[W];
bool sealed[W];

#define CAL(w, e, r) calendar[((w) * E + (e)) * R + (r)]
#define OUT(w, p, e, r) outbox[(((w) * 2 + (p)) * E + (e)) * R + (r)]

/* The wake-up that whoever sends to, or drains, e leaves for e's owner: an
 * entry for round r, in the outbox of this round's parity (my_round). */
inline wake(w_, e_, r_) {
  if
  :: OWNER(e_) == w_ -> CAL(w_, e_, r_)++
  :: else -> OUT(w_, my_round % 2, e_, r_)++
  fi
}

/* An event for e due in round r (r < R), from worker `me`. */
inline send(s_w, s_e, s_r, s_cross) {
  if
  :: pending[AT(s_e, s_r)] < CAP ->
     pending[AT(s_e, s_r)]++;
     sent[AT(s_e, s_r)]++;
     if
     :: s_cross ->
#ifdef DROP_NOTICE
        if
        :: OWNER(s_e) != s_w -> skip   /* the planted bug: the notice is dropped */
        :: else -> wake(s_w, s_e, s_r)
        fi
#else
        wake(s_w, s_e, s_r)
#endif
     :: else -> skip                /* a self-event: the post-drain note covers it */
     fi
  :: else -> skip
  fi
}

/* The steps below are atomic where no other worker can see the difference:
 * what only the holder of an entity or the owner of a calendar touches. The
 * interleavings left are the ones the protocol must survive: a sender's
 * wake against an owner's take of its outbox, pops against pops and seals,
 * and workers at different phases of a round. */
inline drain(d_w, d_e) {
  atomic {
    assert(holder[d_e] == NONE);
    holder[d_e] = d_w;
    /* Nothing was left from earlier rounds. */
    for (past : 0 .. round) {
      assert(past == round || pending[AT(d_e, past)] == 0)
    }
  };
  do
  :: pending[AT(d_e, round)] > 0 ->
     atomic {
       pending[AT(d_e, round)]--;
       handled[AT(d_e, round)]++;
       assert(handled[AT(d_e, round)] <= sent[AT(d_e, round)]);
       if
       :: round + 1 < R ->
          /* Each handled event may send one for the next round: to
           * itself, to another entity, or nothing. */
          select (target : 0 .. E - 1);
          if
          :: true -> send(d_w, target, round + 1, target != d_e)
          :: true -> skip
          fi
       :: else -> skip
       fi
     }
  :: else -> break
  od;
  atomic {
    /* Where the entity stands now: its next pending event, if any. */
    for (later : round + 1 .. R - 1) {
      if
      :: pending[AT(d_e, later)] > 0 -> wake(d_w, d_e, later); break
      :: else -> skip
      fi
    };
    assert(holder[d_e] == d_w);
    holder[d_e] = NONE
  }
}

/* Pops the entities of list v one at a time (the head is a fetch_add). */
inline drain_list(l_w, l_v) {
  do
  :: d_step { at = head[l_v]; head[l_v]++ };
     if
     :: at < tail[l_v] -> assert(sealed[l_v]); drain(l_w, slot[l_v * E + at])
     :: else -> break
     fi
  od
}

proctype Worker(byte me) {
  byte my_round, v, e, r, k;
  byte past, target, later, at;  /* used by drain() and drain_list() */
  bool listed;
  do
  :: my_round == R -> break
  :: else ->
     /* 1. Last round's notices into my calendar (the senders write the
      * other parity now). */
     if
     :: my_round > 0 ->
        for (v : 0 .. W - 1) {
          atomic {
            for (e : 0 .. E - 1) {
              if
              :: OWNER(e) == me ->
                 for (r : 0 .. R - 1) {
                   CAL(me, e, r) = CAL(me, e, r) + OUT(v, TAKEN, e, r);
                   OUT(v, TAKEN, e, r) = 0
                 }
              :: else -> skip
              fi
            }
          }
        }
     :: else -> skip
     fi;
     /* 2. List my entities with an entry due now, once each; seal. */
     atomic {
       for (e : 0 .. E - 1) {
         if
         :: OWNER(e) == me ->
            listed = false;
            for (r : 0 .. my_round) {
              if
              :: CAL(me, e, r) > 0 -> listed = true; CAL(me, e, r) = 0
              :: else -> skip
              fi
            };
            if
            :: listed -> slot[me * E + tail[me]] = e; tail[me]++
            :: else -> skip
            fi
         :: else -> skip
         fi
       };
       sealed[me] = true
     };
     /* 3. My list, then the others' once sealed (or give up waiting). */
     v = me;
     drain_list(me, v);
     for (k : 1 .. W - 1) {
       v = (me + k) % W;
       if
       :: sealed[v] -> drain_list(me, v)
       :: true -> skip
       fi
     };
     /* 4. The barrier; the last to arrive ends the round. */
     skip;
     d_step {
       arrived++;
       if
       :: arrived == W ->
          arrived = 0;
          for (v : 0 .. W - 1) { head[v] = 0; tail[v] = 0; sealed[v] = false };
          round++
       :: else -> skip
       fi
     };
     (round == my_round + 1);
     my_round++
  od
}

init {
  byte e, w, r;
  atomic {
    for (e : 0 .. E - 1) { holder[e] = NONE };
    /* The begin phase: each entity starts with one event, due in round
     * e % R, and its owner's begin read notes it. */
    for (e : 0 .. E - 1) {
      pending[AT(e, e % R)] = 1;
      sent[AT(e, e % R)] = 1;
      CAL(OWNER(e), e, e % R)++
    };
    for (w : 0 .. W - 1) { run Worker(w) }
  };
  /* When every worker is done: each event due in a round was handled in it. */
  (_nr_pr == 1);
  for (e : 0 .. E - 1) {
    for (r : 0 .. R - 1) {
      assert(pending[AT(e, r)] == 0 && handled[AT(e, r)] == sent[AT(e, r)])
    }
  }
}
