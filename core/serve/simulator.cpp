#include "core/serve/simulator.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <queue>

#include "core/base/error.h"

namespace quantplan::serve {
namespace {

std::int64_t cdiv(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// A request inside the engine.
struct Active {
    std::size_t index = 0;            // into the request list
    std::int64_t prefill_target = 0;  // tokens to prefill: the prompt, plus what was generated before a preemption
    std::int64_t prefilled = 0;
    std::int64_t generated = 0;
    std::int64_t blocks = 0;           // blocks it owns
    std::int64_t cached_blocks = 0;    // the prefix cache's blocks it uses (held once, not owned)
    std::int64_t admitted_order = 0;  // later admissions are preempted first
    double last_token_s = 0;          // when its latest output token was produced
    std::int64_t ready_pass = -1;     // the scheduling pass that admitted it with its KV computed (it decodes from the next)
};

}  // namespace

SimulationResult simulate(const std::vector<Request>& given, const EngineLimits& limits, const StepCost& cost, std::int64_t max_steps,
                          std::int64_t closed_loop_users, std::size_t timeline_points) {
    // Closed loop: the first users' requests arrive at once, each later one when a request finishes.
    std::vector<Request> requests = given;
    if (!(limits.frontend_latency_s >= 0) || !std::isfinite(limits.frontend_latency_s) || limits.frontend_latency_s > 1e3)
        throw Error("--serve", "the frontend latency must be 0 to 1000 s");
    if (!(limits.frontend_serial_s >= 0) || !std::isfinite(limits.frontend_serial_s) || limits.frontend_serial_s > 1e3)
        throw Error("--serve", "the frontend's serial time per request must be 0 to 1000 s");
    const double frontend = limits.frontend_latency_s;
    // The frontend's serial part is one server, first come first served: a request sent at `sent`
    // starts there when it is free, and reaches the engine its latency after that part ends.
    double frontend_free_s = 0;
    const auto through_frontend = [&](double sent) {
        frontend_free_s = std::max(sent, frontend_free_s) + limits.frontend_serial_s;
        return frontend_free_s + frontend;
    };
    // An engine without prefix caching (vLLM 0.11.0 for Mamba and gated DeltaNet hybrids) prefills
    // every prompt whole.
    if (!limits.prefix_caching)
        for (Request& r : requests) r.shared_prefix_tokens = 0;
    // Open loop: the arrivals are finite, not negative and in order (the engine takes them in
    // list order; a NaN would stall its idle branch).
    if (closed_loop_users <= 0)
        for (std::size_t i = 0; i < requests.size(); ++i)
            if (!(requests[i].arrival_s >= 0) || !std::isfinite(requests[i].arrival_s) || (i > 0 && requests[i].arrival_s < requests[i - 1].arrival_s))
                throw Error("--serve", "request arrival times must be finite, not negative and in order");
    if (closed_loop_users > 0)
        for (std::size_t i = 0; i < requests.size(); ++i)
            requests[i].arrival_s = static_cast<std::int64_t>(i) < closed_loop_users ? 0.0 : std::numeric_limits<double>::infinity();
    // From here on `requests[i].arrival_s` is when the engine sees the request; out.requests keeps
    // the client's send time.
    std::vector<double> sent_s(requests.size());
    for (std::size_t i = 0; i < requests.size(); ++i) sent_s[i] = requests[i].arrival_s;
    if (limits.frontend_rounds) {
        // Rounds over the requests known now, in the order they were sent. A closed loop's later
        // requests pass first come first served (below), also those that users send in the same
        // step: taken as one round, the held-out closed loop of vLLM 0.11.2 on an H200 (8 users)
        // went from TTFT +4.8% to +12.1% (2026-12-05), and the corpus's medians did not move.
        for (std::size_t i = 0; i < requests.size() && std::isfinite(sent_s[i]);) {
            const double start = std::max(sent_s[i], frontend_free_s);
            std::size_t j = i;
            while (j < requests.size() && sent_s[j] <= start) ++j;
            frontend_free_s = start + static_cast<double>(j - i) * limits.frontend_serial_s;
            for (; i < j; ++i) requests[i].arrival_s = frontend_free_s + frontend;
        }
    } else {
        for (std::size_t i = 0; i < requests.size(); ++i)
            if (std::isfinite(sent_s[i])) requests[i].arrival_s = through_frontend(sent_s[i]);  // a closed loop's later requests wait for their user
    }
    std::size_t released = std::min(requests.size(), static_cast<std::size_t>(std::max<std::int64_t>(closed_loop_users, 0)));
    if (limits.max_num_seqs < 1 || limits.max_num_batched_tokens < 1 || limits.block_size_tokens < 1 || limits.kv_cache_tokens < limits.block_size_tokens)
        throw Error("--serve", "the engine's max_num_seqs, max_num_batched_tokens, block size and KV cache must be positive");
    if (limits.speculative_tokens < 0 || limits.speculative_tokens > 64 ||
        (limits.speculative_tokens > 0 && static_cast<std::int64_t>(limits.acceptance.size()) != limits.speculative_tokens))
        throw Error("--spec", "speculative tokens must be 0 to 64 with one acceptance rate each");
    for (double p : limits.acceptance)
        if (!(p >= 0 && p <= 1)) throw Error("--spec-acceptance", "acceptance rates must lie in [0, 1]");
    if (limits.multi_steps < 1 || limits.multi_steps > 64) throw Error("--num-scheduler-steps", "must be 1 to 64");
    if (limits.multi_steps > 1 && limits.speculative_tokens > 0)
        throw Error("--num-scheduler-steps", "vLLM's multi-step scheduling does not run with speculative decoding");
    if (limits.multi_steps > 1 && !limits.prefill_first)
        throw Error("--num-scheduler-steps", "multi-step scheduling with chunked prefill (mixed steps) is not modelled");
    if (limits.full_groups < 0 || limits.sliding_groups < 0 || limits.state_groups < 0 || limits.full_groups + limits.sliding_groups < 1 ||
        (limits.sliding_groups > 0 && limits.sliding_window < 1) || limits.kv_cache_blocks < 0)
        throw Error("--serve", "the engine's KV-cache groups must be positive");
    const std::int64_t total_blocks = limits.kv_cache_blocks > 0 ? limits.kv_cache_blocks : limits.kv_cache_tokens / limits.block_size_tokens;
    const bool hybrid = limits.sliding_groups > 0;
    // Blocks a request holding `tokens` needs after writing `new_tokens` in one step (full-attention
    // groups every token; sliding groups their window and the step's new tokens; Mamba groups one).
    const auto group_blocks = [&](std::int64_t tokens, std::int64_t new_tokens) {
        const std::int64_t all = cdiv(tokens, limits.block_size_tokens);
        if (!hybrid) return limits.full_groups * all + limits.state_groups;
        const std::int64_t window = cdiv(limits.sliding_window - 1 + std::max<std::int64_t>(new_tokens, 1), limits.block_size_tokens) + 1;
        return limits.full_groups * all + limits.sliding_groups * std::min(all, window) + limits.state_groups;
    };
    for (const Request& r : requests) {
        if (r.input_tokens < 1 || r.output_tokens < 1) throw Error("--serve", "every request needs at least one input and one output token");
        if (r.shared_prefix_tokens < 0 || r.shared_prefix_tokens > r.input_tokens)
            throw Error("--prefix", "a shared prefix of " + std::to_string(r.shared_prefix_tokens) + " tokens is longer than its prompt of " +
                                        std::to_string(r.input_tokens));
        if (group_blocks(r.input_tokens + r.output_tokens, std::min(r.input_tokens, limits.max_num_batched_tokens)) > total_blocks)
            throw Error("--serve", "a request of " + std::to_string(r.input_tokens) + " + " + std::to_string(r.output_tokens) +
                                       " tokens does not fit in a KV cache of " + std::to_string(limits.kv_cache_tokens) + " tokens");
    }
    SimulationResult out;
    out.requests.resize(requests.size());
    for (std::size_t i = 0; i < requests.size(); ++i) {
        out.requests[i].arrival_s = sent_s[i];
        out.requests[i].output_tokens = requests[i].output_tokens;
    }
    std::mt19937_64 spec_rng(limits.spec_seed);
    std::uniform_real_distribution<double> spec_u(0.0, 1.0);
    std::int64_t decode_sequence_steps = 0, decode_tokens_gained = 0;
    std::deque<Active> waiting;
    std::vector<Active> running;
    std::size_t next_arrival = 0;
    std::int64_t free_blocks = total_blocks, order = 0, finished = 0;
    double new_token_ratio = limits.init_new_token_ratio;  // SGLang's admission estimate (reserve_future_tokens)
    const double ratio_decay = limits.ratio_decay_steps > 0 ? (limits.init_new_token_ratio - limits.min_new_token_ratio) / static_cast<double>(limits.ratio_decay_steps) : 0.0;
    bool prefix_ready = false;  // some request has prefilled the shared prefix
    std::int64_t prefix_blocks = 0;  // the prefix cache's blocks (full blocks of the shared prefix)
    double t = requests.empty() ? 0.0 : requests.front().arrival_s;
    const double first_sent_s = requests.empty() ? 0.0 : sent_s.front();
    double batch_time = 0, kv_time = 0;
    std::int64_t timeline_stride = 1, events = 0;
    bool timeline_sampled_step = false;  // the last sample() kept a point
    const auto sample = [&](std::int64_t running_now, std::int64_t waiting_now) {
        timeline_sampled_step = false;
        if (timeline_points == 0) return;
        if (events++ % timeline_stride != 0) return;
        timeline_sampled_step = true;
        out.timeline.push_back({t, running_now, waiting_now, static_cast<double>(total_blocks - free_blocks) / static_cast<double>(total_blocks),
                                out.preemptions});
        if (out.timeline.size() >= 2 * timeline_points) {  // thin to every other point, sample half as often
            std::size_t kept = 0;
            for (std::size_t i = 0; i < out.timeline.size(); i += 2) out.timeline[kept++] = out.timeline[i];
            out.timeline.resize(kept);
            timeline_sampled_step = false;  // this step's point may be one of those dropped
            timeline_stride *= 2;
        }
    };
    double in_system_time = 0;  // time integral of the requests arrived and not finished, from the engine's state
    const auto blocks_for = [&](std::int64_t tokens) { return group_blocks(tokens, 1); };
    // vLLM V1's prefix cache keeps a preempted request's computed blocks (freed, but hashed) until
    // the allocator reuses them, least recently freed first: readmitted before that, it prefills
    // only what was evicted (kv_cache_manager.get_computed_blocks). retained[r]: request r's head
    // blocks still cached; eviction takes the oldest preemption's first, from its tail.
    const bool retain_preempted = limits.whole_chunks && limits.prefix_caching && !hybrid && limits.full_groups == 1 && limits.state_groups == 0;
    std::vector<std::int64_t> retained(requests.size(), 0);
    // Preemptions in the order they freed their blocks: (request, its preemption count then). An
    // entry whose request was preempted again since, or took its blocks back, is stale.
    std::deque<std::pair<std::size_t, std::int64_t>> retained_order;
    std::int64_t retained_total = 0;
    // Takes `n` blocks from the free pool, evicting retained blocks when the unheld ones run out.
    const auto take = [&](std::int64_t n) {
        std::int64_t evict = n - (free_blocks - retained_total);
        while (evict > 0 && !retained_order.empty()) {
            const auto [index, stamp] = retained_order.front();
            std::int64_t& r = retained[index];
            if (r == 0 || stamp != out.requests[index].preemptions) {
                retained_order.pop_front();
                continue;
            }
            const std::int64_t m = std::min(evict, r);
            r -= m, retained_total -= m, evict -= m;
            if (r == 0) retained_order.pop_front();
        }
        free_blocks -= n;
    };
    const auto release = [&](Active& a) {
        free_blocks += a.blocks;
        a.blocks = 0;
    };
    // Blocks of finished requests kept until a time (Request::hold_kv_s), earliest first.
    std::priority_queue<std::pair<double, std::int64_t>, std::vector<std::pair<double, std::int64_t>>, std::greater<>> held;
    const auto release_held = [&] {
        while (!held.empty() && held.top().first <= t) {
            free_blocks += held.top().second;
            held.pop();
        }
    };
    // A step's per-sequence plan (its prefill chunk, whether it decodes, the speculative tokens it
    // verifies), kept across steps so that their storage is reused.
    std::vector<std::int64_t> prefill_chunk, spec_k;
    std::vector<bool> decodes;
    std::int64_t pass = 0;  // scheduling passes (a step, or a wait), for Active::ready_pass
    while (finished < static_cast<std::int64_t>(requests.size())) {
        ++pass;
        if (out.steps >= max_steps) throw Error("--serve", "the simulation did not finish within " + std::to_string(max_steps) + " steps");
        release_held();
        while (next_arrival < requests.size() && requests[next_arrival].arrival_s <= t) {
            Active a;
            a.index = next_arrival;
            a.prefill_target = requests[next_arrival].input_tokens;
            waiting.push_back(a);
            ++next_arrival;
        }
        if (running.empty() && waiting.empty()) {
            sample(0, 0);
            t = requests[next_arrival].arrival_s;  // idle until the next arrival (nothing in the system)
            continue;
        }
        // Schedule one step.
        std::int64_t budget = limits.max_num_batched_tokens;
        StepShape shape;
        prefill_chunk.assign(running.size(), 0);
        decodes.assign(running.size(), false);
        // Speculative tokens each decoding sequence verifies this step (none above the engine's
        // disable batch).
        spec_k.assign(running.size(), 0);
        const std::int64_t step_k =
            limits.speculative_tokens > 0 && (limits.spec_disable_above_batch <= 0 || static_cast<std::int64_t>(running.size()) <= limits.spec_disable_above_batch)
                ? limits.speculative_tokens
                : 0;
        bool preempted = false;  // this step preempted a sequence
        bool admitted_ready = false;  // this step admitted a request whose KV arrived computed (it decodes from the next step)
        // Preempts the most recently admitted running sequence (running[i] itself when it is the
        // latest): its blocks freed, its prompt and output so far to prefill again, at the front of
        // the queue. Keeps `i` on the same sequence; true when the victim was running[i].
        const auto preempt_latest = [&](std::size_t& i) {
            std::size_t victim = i;
            for (std::size_t j = 0; j < running.size(); ++j)
                if (running[j].admitted_order > running[victim].admitted_order) victim = j;
            Active& v = running[victim];
            ++out.requests[v.index].preemptions;
            if (retain_preempted) {
                // A running sequence holds no retained blocks (readmission took them back).
                const std::int64_t computed = v.prefilled < v.prefill_target ? v.prefilled : requests[v.index].input_tokens + v.generated - 1;
                retained[v.index] = std::min(v.blocks, computed / limits.block_size_tokens);
                retained_total += retained[v.index];
                if (retained[v.index] > 0) retained_order.emplace_back(v.index, out.requests[v.index].preemptions);
            }
            release(v);
            v.cached_blocks = 0;
            v.prefill_target = requests[v.index].input_tokens + v.generated;
            v.prefilled = 0;
            ++out.preemptions;
            preempted = true;
            new_token_ratio = limits.init_new_token_ratio;
            waiting.push_front(v);
            running.erase(running.begin() + static_cast<std::ptrdiff_t>(victim));
            prefill_chunk.erase(prefill_chunk.begin() + static_cast<std::ptrdiff_t>(victim));
            if (decodes[victim]) shape.speculative_tokens -= spec_k[victim];
            decodes.erase(decodes.begin() + static_cast<std::ptrdiff_t>(victim));
            spec_k.erase(spec_k.begin() + static_cast<std::ptrdiff_t>(victim));
            if (victim == i) return true;
            if (victim < i) --i;
            return false;
        };
        // Preempts the latest admissions until running[i] holds `need` blocks; true when running[i]
        // itself was preempted (`i` then names the sequence that moved into its slot).
        const auto make_room = [&](std::size_t& i, std::int64_t need) {
            while (need - running[i].blocks - running[i].cached_blocks > free_blocks)
                if (preempt_latest(i)) return true;
            return false;
        };
        // (a) Decoding sequences, one token each; a missing block preempts the latest admission.
        const auto schedule_decodes = [&] {
            for (std::size_t i = 0; i < running.size() && budget > 0; ++i) {
                if (running[i].prefilled < running[i].prefill_target) continue;
                if (running[i].ready_pass == pass) continue;  // admitted this pass with its KV computed: decodes from the next
                // KV positions written: the prompt and every generated token but the last sampled one
                // (which this step writes).
                const std::int64_t held = requests[running[i].index].input_tokens + running[i].generated - 1;
                // The speculative tokens it verifies: the step's K, trimmed to the token budget and
                // to what is left of its output; their KV slots are held with the step's token.
                const std::int64_t k = std::max<std::int64_t>(
                    0, std::min({step_k, budget - 1, requests[running[i].index].output_tokens - running[i].generated - 1}));
                const std::int64_t slots = held + 1 + k + (k > 0 ? limits.spec_lookahead_slots : 0) + (limits.multi_steps - 1);
                if (hybrid && running[i].blocks + running[i].cached_blocks > blocks_for(held + 1)) {
                    // The window moved past blocks the prefill held: vLLM frees them.
                    const std::int64_t extra = std::min(running[i].blocks, running[i].blocks + running[i].cached_blocks - blocks_for(held + 1));
                    running[i].blocks -= extra;
                    free_blocks += extra;
                }
                if (make_room(i, blocks_for(slots))) {
                    --i;  // the next sequence moved into this slot (unsigned wrap at 0 is undone by ++i)
                    continue;
                }
                if (blocks_for(slots) > running[i].blocks + running[i].cached_blocks) {
                    const std::int64_t more = blocks_for(slots) - running[i].blocks - running[i].cached_blocks;
                    take(more);
                    running[i].blocks += more;
                }
                decodes[i] = true;
                spec_k[i] = k;
                ++shape.decode_sequences;
                shape.decode_context_tokens += held + 1;
                shape.speculative_tokens += k;
                budget -= 1 + k;
            }
        };
        // (b) Prefills in progress, in chunks.
        const auto prefill = [&](Active& a, std::int64_t& chunk_out) {
            std::int64_t chunk = std::min(a.prefill_target - a.prefilled, budget);
            const std::int64_t have = a.blocks + a.cached_blocks;
            if (limits.whole_chunks) {
                if (group_blocks(a.prefilled + chunk, chunk) - have > free_blocks) return;  // the whole chunk or nothing
            } else if (!hybrid && limits.full_groups == 1 && limits.state_groups == 0) {
                const std::int64_t can_hold = (have + free_blocks) * limits.block_size_tokens - a.prefilled;
                chunk = std::min(chunk, std::max<std::int64_t>(can_hold, 0));
            } else if (group_blocks(a.prefilled + chunk, chunk) - have > free_blocks) {  // several groups
                // The largest chunk whose blocks fit (needs grow with the chunk).
                std::int64_t lo = 0, hi = chunk;
                while (lo < hi) {
                    const std::int64_t mid = lo + (hi - lo + 1) / 2;
                    if (group_blocks(a.prefilled + mid, mid) - have <= free_blocks) lo = mid;
                    else hi = mid - 1;
                }
                chunk = lo;
            }
            if (chunk <= 0) return;
            const std::int64_t need = std::max<std::int64_t>(group_blocks(a.prefilled + chunk, chunk) - a.blocks - a.cached_blocks, 0);
            take(need);
            a.blocks += need;
            shape.prefill_tokens += chunk;
            ++shape.prefill_sequences;
            shape.prefill_chunks.push_back({a.prefilled, chunk});
            budget -= chunk;
            chunk_out = chunk;
        };
        const auto schedule_prefills = [&] {
            for (std::size_t i = 0; i < running.size() && budget > 0; ++i) {
                if (running[i].prefilled >= running[i].prefill_target) continue;
                if (limits.whole_chunks) {
                    // A running sequence's chunk preempts the latest admissions until its blocks fit.
                    const std::int64_t chunk = std::min(running[i].prefill_target - running[i].prefilled, budget);
                    if (make_room(i, group_blocks(running[i].prefilled + chunk, chunk))) {
                        --i;  // the next sequence moved into this slot (unsigned wrap at 0 is undone by ++i)
                        continue;
                    }
                }
                prefill(running[i], prefill_chunk[i]);
            }
            // vLLM admits no waiting request in a step that preempted.
            if (limits.whole_chunks && preempted) return;
            // (c) Admissions while there are budget, sequence slots and blocks.
            double reserved_tokens = 0;  // SGLang: the running requests' future tokens, then this step's admissions
            if (limits.reserve_future_tokens)
                for (const Active& r : running)
                    reserved_tokens += static_cast<double>(std::min(std::max<std::int64_t>(requests[r.index].output_tokens - r.generated, 0),
                                                                    limits.clip_max_new_tokens)) *
                                       new_token_ratio;
            while (budget > 0 && !waiting.empty() && static_cast<std::int64_t>(running.size()) < limits.max_num_seqs && free_blocks > 0) {
                std::int64_t hit = 0;
                Active a = waiting.front();
                waiting.pop_front();
                a.admitted_order = ++order;
                // A preempted request readmitted while its blocks are cached takes them back.
                const std::int64_t kept = retained[a.index];
                if (kept > 0) {
                    const std::int64_t reused = std::min(kept, (a.prefill_target - 1) / limits.block_size_tokens);
                    retained[a.index] = 0;
                    retained_total -= kept;
                    free_blocks -= reused;
                    a.blocks = reused;
                    a.prefilled = reused * limits.block_size_tokens;
                }
                // The admission failed: the blocks stay cached (its entry in retained_order, still
                // current, keeps their place in the eviction order).
                const auto unreuse = [&](Active& back) {
                    if (kept == 0) return;
                    free_blocks += back.blocks;
                    back.blocks = 0;
                    back.prefilled = 0;
                    retained[back.index] = kept;
                    retained_total += kept;
                };
                if (a.prefilled == 0 && prefix_ready && requests[a.index].shared_prefix_tokens > 0) {
                    a.prefilled = std::min(requests[a.index].shared_prefix_tokens, a.prefill_target - 1);
                    a.cached_blocks = std::min(prefix_blocks, limits.full_groups * (requests[a.index].shared_prefix_tokens / limits.block_size_tokens));
                    hit = a.prefilled;
                }
                // Admission rules beyond slots and blocks; a request they refuse waits at the front.
                const std::int64_t future = std::min(requests[a.index].output_tokens - a.generated, limits.clip_max_new_tokens);
                bool admissible = true;
                if (limits.reserve_future_tokens && !running.empty()) {
                    // SGLang: its prompt and clipped output within the free tokens less the reservation.
                    const double room = static_cast<double>(free_blocks * limits.block_size_tokens) - reserved_tokens;
                    admissible = static_cast<double>(a.prefill_target - a.prefilled + future) < room;
                }
                if (admissible && limits.whole_prompt_prefill) {
                    // vLLM V0 without chunked prefill: a prompt is prefilled whole, so it waits for a
                    // step with the budget and the free blocks for all of it.
                    const std::int64_t rest = a.prefill_target - a.prefilled;
                    admissible = !((rest > budget && shape.prefill_tokens > 0) || group_blocks(a.prefill_target, rest) - a.cached_blocks > free_blocks);
                }
                if (!admissible) {
                    a.prefilled -= hit;
                    a.cached_blocks = 0;
                    unreuse(a);
                    --order;
                    waiting.push_front(a);
                    break;
                }
                if (limits.reserve_future_tokens) reserved_tokens += static_cast<double>(future);
                if (requests[a.index].kv_ready && a.prefilled == 0 && a.generated == 0 && out.requests[a.index].preemptions == 0) {
                    // Its prompt's KV arrived computed: blocks for it, no prefill, decoding from the next step.
                    const std::int64_t need = group_blocks(a.prefill_target, 1);
                    if (need > free_blocks) {
                        --order;
                        waiting.push_front(a);
                        break;
                    }
                    take(need);
                    a.blocks = need;
                    a.prefilled = a.prefill_target;
                    a.ready_pass = pass;
                    running.push_back(a);
                    prefill_chunk.push_back(0);
                    decodes.push_back(false);
                    spec_k.push_back(0);
                    if (out.requests[a.index].admitted_s < 0) out.requests[a.index].admitted_s = t;
                    admitted_ready = true;
                    continue;
                }
                running.push_back(a);
                prefill_chunk.push_back(0);
                decodes.push_back(false);
                spec_k.push_back(0);
                prefill(running.back(), prefill_chunk.back());
                if (prefill_chunk.back() == 0) {  // no block after all: back to the queue
                    running.back().prefilled -= hit;
                    running.back().cached_blocks = 0;
                    unreuse(running.back());
                    hit = 0;
                    waiting.push_front(running.back());
                    running.pop_back();
                    prefill_chunk.pop_back();
                    decodes.pop_back();
                    spec_k.pop_back();
                    break;
                }
                out.prefix_hit_tokens += hit;
                if (out.requests[running.back().index].admitted_s < 0) out.requests[running.back().index].admitted_s = t;
            }
        };
        if (limits.prefill_first) {
            // A step prefills or decodes, never both: prefills first when there are any to run.
            schedule_prefills();
            if (shape.prefill_tokens == 0) schedule_decodes();
        } else {
            schedule_decodes();
            schedule_prefills();
        }
        if (shape.decode_sequences == 0 && shape.prefill_tokens == 0) {
            // Only requests whose KV arrived computed were admitted: they decode in the next step.
            if (admitted_ready) continue;
            if (next_arrival < requests.size() || !held.empty()) {
                // Blocked until the next arrival or held blocks are freed: the queue waits meanwhile.
                double until = next_arrival < requests.size() ? requests[next_arrival].arrival_s : held.top().first;
                if (!held.empty()) until = std::min(until, held.top().first);
                until = std::max(t, until);
                in_system_time += (until - t) * static_cast<double>(running.size() + waiting.size());
                t = until;
                continue;
            }
            throw Error("--serve", "the scheduler is stuck: no sequence can run with the KV cache given");
        }
        if (shape.decode_sequences > 0) new_token_ratio = std::max(new_token_ratio - ratio_decay, limits.min_new_token_ratio);
        // Multi-step scheduling: a decode-only step is a window of multi_steps forward passes.
        if (limits.multi_steps > 1 && shape.prefill_tokens == 0 && shape.decode_sequences > 0) shape.steps = limits.multi_steps;
        // Run it.
        sample(static_cast<std::int64_t>(running.size()), static_cast<std::int64_t>(waiting.size()));
        const double dt = cost(shape);
        if (!(dt > 0) || !std::isfinite(dt)) throw Error("--serve", "a step cost must be a positive time");
        batch_time += dt * static_cast<double>(running.size());
        // In the system during the step: what the engine holds, plus what arrives meanwhile (the
        // scheduler sees it at the next step).
        in_system_time += dt * static_cast<double>(running.size() + waiting.size());
        for (std::size_t k = next_arrival; k < requests.size() && requests[k].arrival_s <= t + dt; ++k) in_system_time += t + dt - requests[k].arrival_s;
        kv_time += dt * static_cast<double>(total_blocks - free_blocks) / static_cast<double>(total_blocks);
        t += dt;
        out.busy_s += dt;
        out.prefill_s += dt * static_cast<double>(shape.prefill_tokens) / static_cast<double>(shape.prefill_tokens + shape.decode_sequences);
        ++out.steps;
        // Its effects: a finished prefill samples the first (next) token; decodes add a token.
        // Equal gaps (every sequence that also decoded in the step before) go to the histogram at once.
        double pending_gap = -1;
        std::int64_t pending = 0;
        const auto gap = [&](double g) {
            if (g != pending_gap) {
                out.itl.add(pending_gap, pending);
                pending_gap = g;
                pending = 0;
            }
            ++pending;
        };
        std::int64_t step_decodes = 0, step_gained = 0, step_spec = 0, step_accepted = 0;
        const std::size_t timeline_before = out.timeline.size();
        for (std::size_t i = 0; i < running.size(); ++i) {
            Active& a = running[i];
            bool produced = decodes[i];
            if (prefill_chunk[i] > 0) {
                a.prefilled += prefill_chunk[i];
                produced = a.prefilled == a.prefill_target;
                const std::int64_t shared = requests[a.index].shared_prefix_tokens;
                if (shared > 0 && a.prefilled >= shared && !prefix_ready) {
                    // The first prefill of the prefix: its full blocks pass to the cache, held once.
                    prefix_ready = true;
                    prefix_blocks = limits.full_groups * (shared / limits.block_size_tokens);  // full-attention groups' blocks
                    a.blocks -= prefix_blocks;
                    a.cached_blocks = prefix_blocks;
                    out.prefix_cache_blocks = prefix_blocks;
                }
            }
            if (!produced) continue;
            // A decode gains its token and, speculating, the speculative tokens accepted; a
            // multi-step window its passes' tokens (streamed together at its end).
            std::int64_t gained = decodes[i] ? shape.steps : 1;
            if (decodes[i]) {
                if (spec_k[i] > 0) {
                    std::int64_t accepted = 0;
                    const double u = spec_u(spec_rng);
                    while (accepted < spec_k[i] && u < limits.acceptance[static_cast<std::size_t>(accepted)]) ++accepted;
                    gained += accepted;
                    out.speculative_tokens += spec_k[i];
                    out.accepted_tokens += accepted;
                    step_spec += spec_k[i];
                    step_accepted += accepted;
                }
                decode_sequence_steps += shape.steps;  // forward passes (a multi-step window runs several)
                decode_tokens_gained += gained;
                ++step_decodes;
                step_gained += gained;
            }
            a.generated = std::min(a.generated + gained, requests[a.index].output_tokens);
            RequestResult& res = out.requests[a.index];
            if (a.generated == 1) res.first_token_s = t;
            else gap(t - a.last_token_s);
            a.last_token_s = t;
            if (a.generated >= requests[a.index].output_tokens) {
                res.finish_s = t;
                if (requests[a.index].hold_kv_s > 0 && a.blocks > 0) {
                    held.emplace(t + requests[a.index].hold_kv_s, a.blocks);
                    a.blocks = 0;
                } else {
                    release(a);
                }
                ++finished;
                if (closed_loop_users > 0 && released < requests.size()) {  // this user's next request
                    requests[released].arrival_s = through_frontend(t);
                    out.requests[released].arrival_s = t;
                    ++released;
                }
                a.index = requests.size();  // marked for removal
            }
        }
        out.itl.add(pending_gap, pending);
        // The step's speculation on the timeline point that opened it (when one was kept).
        if (limits.speculative_tokens > 0 && step_decodes > 0 && !out.timeline.empty() && timeline_sampled_step &&
            out.timeline.size() == timeline_before) {
            out.timeline.back().tokens_per_sequence = static_cast<double>(step_gained) / static_cast<double>(step_decodes);
            out.timeline.back().acceptance = step_spec > 0 ? static_cast<double>(step_accepted) / static_cast<double>(step_spec) : 0.0;
        }
        running.erase(std::remove_if(running.begin(), running.end(), [&](const Active& a) { return a.index == requests.size(); }), running.end());
    }
    out.end_s = t;
    out.tokens_per_decode_step = decode_sequence_steps > 0 ? static_cast<double>(decode_tokens_gained) / static_cast<double>(decode_sequence_steps) : 0.0;
    // Every request spends the frontend latency, and its wait at the frontend's serial part, outside
    // the engine's queues, in the system all the same.
    for (std::size_t i = 0; i < requests.size(); ++i) in_system_time += requests[i].arrival_s - out.requests[i].arrival_s;
    const double span = out.requests.empty() ? 0.0 : out.end_s - first_sent_s;
    out.mean_batch = span > 0 ? batch_time / span : 0.0;
    out.mean_kv_utilization = span > 0 ? kv_time / span : 0.0;
    out.mean_in_system = span > 0 ? in_system_time / span : 0.0;
    return out;
}

void GapHistogram::add(double gap_s, std::int64_t count) {
    if (count <= 0) return;
    const double decades = std::log10(std::max(gap_s, kLowest_s) / kLowest_s);
    const auto bin = std::clamp<std::int64_t>(static_cast<std::int64_t>(decades * kBinsPerDecade), 0, static_cast<std::int64_t>(counts.size()) - 1);
    counts[static_cast<std::size_t>(bin)] += count;
    total += count;
    sum_s += gap_s * static_cast<double>(count);
}

double GapHistogram::quantile(double q) const {
    if (total == 0) return 0.0;
    // The smallest bin whose cumulative count reaches q of the gaps (the nearest-rank percentile).
    const auto rank = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(q * static_cast<double>(total))));
    std::int64_t seen = 0;
    for (std::size_t i = 0; i < counts.size(); ++i) {
        seen += counts[i];
        if (seen >= rank) return kLowest_s * std::pow(10.0, (static_cast<double>(i) + 0.5) / kBinsPerDecade);
    }
    return kLowest_s * std::pow(10.0, static_cast<double>(kDecades));
}

std::vector<Request> poisson_requests(std::int64_t count, double rate, std::int64_t input_tokens, std::int64_t output_tokens, std::uint64_t seed) {
    if (!(rate > 0) || !std::isfinite(rate)) throw Error("--rate", "must be a positive number of requests per second");
    std::mt19937_64 rng(seed);
    std::exponential_distribution<double> gap(rate);
    std::vector<Request> out;
    double t = 0;
    for (std::int64_t i = 0; i < count; ++i) {
        out.push_back({t, input_tokens, output_tokens});
        t += gap(rng);
    }
    return out;
}

LittlesLaw littles_law(const SimulationResult& r) {
    LittlesLaw l;
    if (r.requests.empty()) return l;
    double first = r.requests.front().arrival_s, sum_latency = 0;
    for (const RequestResult& q : r.requests) {
        first = std::min(first, q.arrival_s);
        sum_latency += q.e2e_s();
    }
    const double span = r.end_s - first;
    if (!(span > 0)) return l;
    // L from the engine's state over the run, lambda x W from the requests' own timestamps.
    l.mean_in_system = r.mean_in_system;
    l.throughput_times_latency = static_cast<double>(r.requests.size()) / span * (sum_latency / static_cast<double>(r.requests.size()));
    return l;
}

}  // namespace quantplan::serve
