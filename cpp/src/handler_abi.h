/* The C ABI of compiled handlers (seer::CompiledModel, seer_env.NumbaModel).
 *
 * A model whose handlers are machine code from another compiler (numba's
 * cfuncs) cannot take a seer::Context&. It gets an opaque `seer_ctx*` and
 * calls the functions of `seer_ctx_api` on it; the runtime implements them on
 * the real Context, so the random streams and the contract checks are the C++
 * ones, bit for bit. Plain C: no C++ type crosses, and nothing may unwind
 * through the foreign frames, so every failure is a status code:
 *
 *   - A handler returns SEER_OK, or SEER_HANDLER_FAILED when it raised (the
 *     runtime raises HandlerError naming entity, event kind and time).
 *   - A context call that fails (a contract breach in schedule, below(0))
 *     returns SEER_CONTEXT_FAILED (draws return 0) and parks the C++ exception
 *     in the context; the runtime rethrows it when the handler returns, even if
 *     the handler went on. Later schedule calls of that handler are refused.
 *
 * Records (state, snapshot, payload, params) are raw bytes laid out as the
 * model declared them (numpy structured dtypes without padding).
 */
#ifndef SEER_HANDLER_ABI_H_
#define SEER_HANDLER_ABI_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped on any change to the signatures below. */
#define SEER_HANDLER_ABI_VERSION 4

#define SEER_OK 0
#define SEER_HANDLER_FAILED 1
#define SEER_CONTEXT_FAILED 2

typedef struct seer_ctx seer_ctx; /* valid only during the handler call */

/* What every seer_ctx begins with: the handler's constants, filled by the
 * runtime before each call, so that compiled code reads them without a call
 * (the functions of the same names in seer_ctx_api return the same values). */
typedef struct seer_ctx_header {
  double now;
  double lookahead;
  double dt;
  uint32_t self;
  uint32_t source; /* of the event being handled; self outside on_event */
  uint32_t num_entities;
  uint32_t reserved;
} seer_ctx_header;

/* -- What a handler may do (implemented by the runtime). ------------------------------------ */
typedef struct seer_ctx_api {
  uint32_t version; /* SEER_HANDLER_ABI_VERSION */
  double (*now)(const seer_ctx* ctx);
  uint32_t (*self)(const seer_ctx* ctx);
  /* Source entity of the event being handled; self outside on_event. */
  uint32_t (*source)(const seer_ctx* ctx);
  uint32_t (*num_entities)(const seer_ctx* ctx);
  double (*lookahead)(const seer_ctx* ctx);
  double (*dt)(const seer_ctx* ctx);
  /* The handler entity's Philox4x64 stream (seer/rng.hpp). */
  double (*uniform)(seer_ctx* ctx);
  double (*exponential)(seer_ctx* ctx, double mean);
  uint64_t (*below)(seer_ctx* ctx, uint64_t n); /* n >= 1, else SEER_CONTEXT_FAILED parked */
  uint64_t (*next_u64)(seer_ctx* ctx);
  /* `kind` for `target` at `time`, payload of `size` <= 64 bytes (NULL, 0: none). */
  int32_t (*schedule)(seer_ctx* ctx, uint32_t target, double time, uint32_t kind,
                      const void* payload, uint64_t size);
  /* The handler agent asks for its next action (seer::Context::request_decision). */
  int32_t (*request_decision)(seer_ctx* ctx);
} seer_ctx_api;

/* -- What the model provides (compiled handlers). ------------------------------------------- */
/* Entity-local handlers: `state` is the entity's own writable record,
 * `snapshot` every entity's public record (read only), `params` the model's
 * parameter record (read only). */
typedef int32_t (*seer_init_fn)(seer_ctx* ctx, void* state, const void* snapshot,
                                const void* params);
typedef int32_t (*seer_action_fn)(seer_ctx* ctx, void* state, const void* snapshot,
                                  const void* params, int64_t discrete, const float* box,
                                  uint64_t dim);
/* `payload`: the event's 64 payload bytes, writable (the event is dropped after the call). */
typedef int32_t (*seer_event_fn)(seer_ctx* ctx, void* state, const void* snapshot,
                                 const void* params, uint32_t kind, void* payload);
/* Boundary hooks take a range of entities [begin, end), one call per range
 * (per entity, a call cost as much as a small hook's work). A hook that fails
 * writes the entity it failed on to `*failed` and returns SEER_HANDLER_FAILED.
 *
 * Parallel over entities: the public record of each state of the range. */
typedef int32_t (*seer_write_snapshots_fn)(const void* states, void* snapshot, uint64_t begin,
                                           uint64_t end, const void* params, uint64_t* failed);
/* Parallel over agents: `out` holds the range's rows of `out_size` values
 * each, agent `begin` first (float32 observation, one float64 reward, one
 * uint8 flag or int64 infos, by hook). */
typedef int32_t (*seer_agents_fn)(uint64_t begin, uint64_t end, const void* states,
                                  const void* snapshot, uint64_t num_entities,
                                  const void* params, void* out, uint64_t out_size,
                                  uint64_t* failed);
/* Serial: reset(states) (out NULL), global_state(out float32), totals(out int64). */
typedef int32_t (*seer_states_fn)(void* states, const void* snapshot, uint64_t num_entities,
                                  const void* params, void* out, uint64_t out_size);

typedef struct seer_model_handlers {
  seer_states_fn reset;          /* may be NULL: states stay zero */
  seer_init_fn on_init;          /* may be NULL */
  seer_init_fn on_step_begin;    /* may be NULL */
  seer_action_fn on_action;
  seer_event_fn on_event;
  seer_write_snapshots_fn write_snapshot;
  seer_agents_fn observe;
  seer_agents_fn reward;
  seer_agents_fn terminated;     /* may be NULL: never */
  seer_agents_fn truncated;      /* may be NULL: never */
  seer_agents_fn info;           /* may be NULL when there are no info keys */
  seer_states_fn global_state;   /* may be NULL when state_dim is 0 */
  seer_states_fn totals;         /* may be NULL when there are no total keys */
} seer_model_handlers;

/* The runtime's implementation of the context API. */
const seer_ctx_api* seer_handler_ctx_api(void);

/* Nonzero when the step running on this thread was asked to stop (Ctrl-C, a
 * vector env's interrupt). Compiled code polls it in every loop, so a loop
 * that never ends still stops: the handler then returns SEER_HANDLER_FAILED
 * and the runtime raises the interrupt, not a handler error. Cheap: one load
 * of a process-wide count while no step anywhere is being stopped. */
int32_t seer_handler_stop_requested(void);

#ifdef __cplusplus
}
#endif

#endif /* SEER_HANDLER_ABI_H_ */
