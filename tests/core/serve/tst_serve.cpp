// The continuous-batching simulator (core/serve/simulator.h): Little's law in every run, a lone
// request's TPOT and TTFT equal to the steps that serve it, determinism for a seed, saturation at
// what the engine admits, preemption when the KV cache runs out, and bad input as one error.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <limits>

#include <algorithm>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "core/base/text_file.h"
#include "core/engine/step_model.h"
#include "core/model/model.h"
#include "core/roofline/roofline.h"
#include "core/scheme/scheme.h"
#include "core/serve/capacity.h"
#include "core/serve/capacity_plan.h"
#include "core/serve/gpu_prices.h"
#include "core/serve/simulator.h"
#include "tests/core/test_support.h"

using namespace quantplan;
using namespace quantplan::serve;

namespace {

// A step: 4 ms fixed, 20 us per decoding sequence, 50 us per 1,000 KV tokens read, 0.1 ms per 1,000
// prompt tokens: a synthetic model with the shape of a decode step (fixed weights read, per-token
// terms), so the invariants are checked on known numbers.
double synthetic_cost(const StepShape& s) {
    return 4e-3 + 20e-6 * static_cast<double>(s.decode_sequences) + 50e-9 * static_cast<double>(s.decode_context_tokens) +
           100e-9 * static_cast<double>(s.prefill_tokens);
}

// The synthetic step cost with `max_num_seqs` sequence slots (everything else the defaults).
EnginePricing synthetic_pricing(std::int64_t max_num_seqs) {
    EnginePricing p;
    p.cost = synthetic_cost;
    p.limits.max_num_seqs = max_num_seqs;
    return p;
}

// `requests` requests of fixed prompt and output lengths.
Traffic fixed_traffic(std::int64_t requests, std::int64_t input_tokens, std::int64_t output_tokens) {
    Traffic t;
    t.requests = requests;
    t.input = parse_length_spec(std::to_string(input_tokens), "--isl");
    t.output = parse_length_spec(std::to_string(output_tokens), "--osl");
    return t;
}

// Little's law within 2%, the issue's tolerance.
constexpr double kLittleTolerance = 0.02;

}  // namespace

BOOST_AUTO_TEST_SUITE(serve_simulator)

BOOST_AUTO_TEST_CASE(a_lone_request_takes_the_steps_that_serve_it) {
    EngineLimits limits;
    limits.max_num_batched_tokens = 512;
    const std::vector<Request> one = {{0.0, 2000, 100}};
    const SimulationResult r = simulate(one, limits, synthetic_cost);
    BOOST_TEST_REQUIRE(r.requests.size() == 1u);
    // Prefill of 2,000 tokens in chunks of 512: 4 steps; the last samples the first token.
    double ttft = 0;
    for (std::int64_t start = 0; start < 2000; start += 512) {
        StepShape s;
        s.prefill_tokens = std::min<std::int64_t>(512, 2000 - start);
        ttft += synthetic_cost(s);
    }
    BOOST_TEST(std::abs(r.requests[0].ttft_s() - ttft) < 1e-12);
    // Each later token is one decode step of one sequence at its context.
    double decode = 0;
    for (std::int64_t g = 1; g < 100; ++g) {
        StepShape s;
        s.decode_sequences = 1;
        s.decode_context_tokens = 2000 + g;
        decode += synthetic_cost(s);
    }
    BOOST_TEST(std::abs(r.requests[0].tpot_s() - decode / 99.0) < 1e-12);
    BOOST_TEST(r.steps == 4 + 99);
}

BOOST_AUTO_TEST_CASE(littles_law_holds_in_every_run) {
    EngineLimits limits;
    limits.max_num_seqs = 64;
    limits.max_num_batched_tokens = 2048;
    limits.kv_cache_tokens = 200'000;
    for (double rate : {0.5, 5.0, 20.0, 80.0, 400.0}) {
        const SimulationResult r = simulate(poisson_requests(2000, rate, 500, 200, 7), limits, synthetic_cost);
        const LittlesLaw l = littles_law(r);
        BOOST_TEST(std::abs(l.mean_in_system - l.throughput_times_latency) <= kLittleTolerance * l.throughput_times_latency,
                   "rate " << rate << ": L " << l.mean_in_system << ", lambda W " << l.throughput_times_latency);
        for (const RequestResult& q : r.requests) {
            BOOST_TEST(q.finish_s >= q.first_token_s);
            BOOST_TEST(q.first_token_s > q.arrival_s);
        }
    }
}

BOOST_AUTO_TEST_CASE(same_seed_same_run_and_saturation_at_the_admitted_batch) {
    EngineLimits limits;
    limits.max_num_seqs = 32;
    limits.kv_cache_tokens = 1 << 22;
    const SimulationResult a = simulate(poisson_requests(500, 50, 300, 100, 11), limits, synthetic_cost);
    const SimulationResult b = simulate(poisson_requests(500, 50, 300, 100, 11), limits, synthetic_cost);
    const SimulationResult c = simulate(poisson_requests(500, 50, 300, 100, 12), limits, synthetic_cost);
    BOOST_TEST(a.end_s == b.end_s);
    BOOST_TEST(a.requests[123].e2e_s() == b.requests[123].e2e_s());
    BOOST_TEST(a.end_s != c.end_s);
    // Far beyond saturation the engine runs at most max_num_seqs sequences; output throughput is
    // then bounded by max_num_seqs tokens per (at least) the fixed step.
    const SimulationResult flood = simulate(poisson_requests(2000, 1e6, 300, 100, 3), limits, synthetic_cost);
    BOOST_TEST(flood.mean_batch <= 32.0 + 1e-9);
    const double tokens_per_s = 2000.0 * 100.0 / flood.end_s;
    BOOST_TEST(tokens_per_s <= 32.0 / 4e-3);
    BOOST_TEST(flood.mean_batch > 25.0);  // and it does fill the batch
}

BOOST_AUTO_TEST_CASE(a_small_kv_cache_preempts_and_every_request_still_finishes) {
    EngineLimits limits;
    limits.max_num_seqs = 64;
    limits.kv_cache_tokens = 16 * 400;  // room for about five sequences at full length
    const SimulationResult r = simulate(poisson_requests(200, 1000, 700, 500, 5), limits, synthetic_cost);
    BOOST_TEST(r.preemptions > 0);
    for (const RequestResult& q : r.requests) BOOST_TEST(q.finish_s > 0);
    const LittlesLaw l = littles_law(r);
    BOOST_TEST(std::abs(l.mean_in_system - l.throughput_times_latency) <= kLittleTolerance * l.throughput_times_latency);
    BOOST_TEST(r.mean_kv_utilization <= 1.0 + 1e-12);
}

// vLLM's scheduler: a chunk is scheduled whole or not at all. Two requests of 1,000 prompt tokens
// in a cache of 1,200 tokens: the idealised scheduler starts the second with the 200 tokens left
// (and preempts it as the first grows); vLLM's waits until the first has finished and freed its
// blocks, and nothing is preempted.
BOOST_AUTO_TEST_CASE(vllm_schedules_a_chunk_whole_or_waits) {
    EngineLimits limits;
    limits.kv_cache_tokens = 1200;
    limits.max_num_batched_tokens = 4096;
    limits.prefix_caching = false;
    const std::vector<Request> two = {{0.0, 1000, 100, 0}, {0.0, 1000, 100, 0}};
    const SimulationResult ideal = simulate(two, limits, synthetic_cost);
    BOOST_TEST(ideal.requests[1].admitted_s == 0.0);  // 200 tokens of it started with the first
    limits.whole_chunks = true;
    const SimulationResult vllm = simulate(two, limits, synthetic_cost);
    BOOST_TEST(vllm.preemptions == 0);
    BOOST_TEST(vllm.requests[1].admitted_s >= vllm.requests[0].finish_s - 1e-12);
}

// vLLM V1's prefix cache keeps a preempted request's blocks: readmitted before they are reused, it
// prefills only the tokens it lost. The same preempting run with and without prefix caching: the
// same preemptions' recompute costs prefill time only without it.
BOOST_AUTO_TEST_CASE(a_preempted_request_keeps_its_cached_blocks_in_vllm) {
    EngineLimits limits;
    limits.max_num_seqs = 64;
    limits.kv_cache_tokens = 16 * 400;
    limits.whole_chunks = true;
    const std::vector<Request> burst = poisson_requests(200, 1000, 700, 500, 5);
    // The prompt tokens every step prefills, over the run.
    std::int64_t prefilled = 0;
    const StepCost counting = [&](const StepShape& shape) {
        prefilled += shape.prefill_tokens;
        return synthetic_cost(shape);
    };
    limits.prefix_caching = false;
    const SimulationResult recompute = simulate(burst, limits, counting);
    const std::int64_t recompute_tokens = prefilled;
    prefilled = 0;
    limits.prefix_caching = true;
    const SimulationResult cached = simulate(burst, limits, counting);
    const std::int64_t cached_tokens = prefilled;
    BOOST_TEST(recompute.preemptions > 0);
    BOOST_TEST(cached.preemptions > 0);
    // Without the cache each preemption re-prefills its whole sequence (at least its 700-token
    // prompt); with it, only what was evicted.
    const std::int64_t prompts = 200 * 700;
    BOOST_TEST(recompute_tokens >= prompts + 700 * recompute.preemptions);
    // A cache this small (five sequences) evicts much of a victim before it returns: here about 40%
    // of the recompute is saved per preemption.
    const double per_recompute = static_cast<double>(recompute_tokens - prompts) / static_cast<double>(recompute.preemptions);
    const double per_cached = static_cast<double>(cached_tokens - prompts) / static_cast<double>(cached.preemptions);
    BOOST_TEST(per_cached < 0.75 * per_recompute, cached_tokens << " vs " << recompute_tokens << " (" << cached.preemptions << " and "
                                                                << recompute.preemptions << " preemptions)");
    for (const RequestResult& q : cached.requests) BOOST_TEST(q.finish_s > 0);
    const LittlesLaw l = littles_law(cached);
    BOOST_TEST(std::abs(l.mean_in_system - l.throughput_times_latency) <= kLittleTolerance * l.throughput_times_latency);
}

BOOST_AUTO_TEST_CASE(a_closed_loop_keeps_its_users_busy) {
    EngineLimits limits;
    const std::vector<Request> work(300, Request{0.0, 400, 150});
    const SimulationResult one = simulate(work, limits, synthetic_cost, 50'000'000, 1);
    // One user: requests back to back, so the run is the sum of their latencies.
    double sum = 0;
    for (const RequestResult& q : one.requests) sum += q.e2e_s();
    BOOST_TEST(std::abs(one.end_s - sum) < 1e-9 * one.end_s);
    const SimulationResult eight = simulate(work, limits, synthetic_cost, 50'000'000, 8);
    BOOST_TEST(eight.mean_in_system <= 8.0 + 1e-9);
    BOOST_TEST(eight.mean_in_system > 7.0);
    const LittlesLaw l = littles_law(eight);
    BOOST_TEST(std::abs(l.mean_in_system - l.throughput_times_latency) <= kLittleTolerance * l.throughput_times_latency);
    BOOST_TEST(eight.end_s < one.end_s / 4);  // batching eight at a time
}

BOOST_AUTO_TEST_CASE(bad_input_is_one_error) {
    EngineLimits limits;
    limits.kv_cache_tokens = 1024;
    BOOST_TEST(test::throws_naming([&] { simulate({{0, 1000, 100}}, limits, synthetic_cost); }, "does not fit in a KV cache"));
    BOOST_TEST(test::throws_naming([&] { poisson_requests(10, 0, 1, 1, 1); }, "--rate"));
    EngineLimits zero;
    zero.max_num_seqs = 0;
    BOOST_TEST(test::throws_naming([&] { simulate({{0, 10, 10}}, zero, synthetic_cost); }, "must be positive"));
    BOOST_TEST(test::throws_naming([&] { simulate({{0, 10, 10}}, EngineLimits{}, [](const StepShape&) { return 0.0; }); }, "positive time"));
}

// vLLM's hybrid allocator: sliding-window groups hold at most their window, so the same pool of
// blocks runs more long requests at once than when every layer holds every token; and a run with
// one full group and no sliding one is the plain simulator, step for step.
BOOST_AUTO_TEST_CASE(sliding_window_groups_hold_their_window) {
    std::vector<Request> burst;
    for (int i = 0; i < 40; ++i) burst.push_back({0.0, 2000, 50, 0});
    EngineLimits full;
    full.kv_cache_blocks = 1500;
    full.kv_cache_tokens = 2000 * 16;
    full.block_size_tokens = 16;
    full.max_num_batched_tokens = 512;  // prefill chunks of 512: a sliding group holds window + chunk
    full.full_groups = 2;               // both layer groups hold every token
    EngineLimits hybrid = full;
    hybrid.full_groups = 1;
    hybrid.sliding_groups = 1;
    hybrid.sliding_window = 128;
    const auto peak = [](const SimulationResult& r) {
        std::int64_t m = 0;
        for (const TimelinePoint& p : r.timeline) m = std::max(m, p.running);
        return m;
    };
    const SimulationResult a = simulate(burst, full, synthetic_cost, 50'000'000, 0, 1000);
    const SimulationResult b = simulate(burst, hybrid, synthetic_cost, 50'000'000, 0, 1000);
    // 1,500 blocks: 2 x 129 per request when both groups hold every token (5 at once), 129 + at most
    // 41 with a 128-token window and 512-token chunks (about 9 at once; 10 once decoding).
    BOOST_TEST_MESSAGE("full: peak " << peak(a) << " preemptions " << a.preemptions << " mean batch " << a.mean_batch << " end " << a.end_s);
    BOOST_TEST_MESSAGE("hybrid: peak " << peak(b) << " preemptions " << b.preemptions << " mean batch " << b.mean_batch << " end " << b.end_s);
    BOOST_TEST(peak(a) <= 6);
    BOOST_TEST(peak(b) >= 9);
    BOOST_TEST(b.end_s < 0.8 * a.end_s);
    EngineLimits one = full;
    one.full_groups = 1;
    one.kv_cache_blocks = 0;
    EngineLimits same = one;
    same.kv_cache_blocks = one.kv_cache_tokens / one.block_size_tokens;
    const SimulationResult x = simulate(poisson_requests(300, 20, 700, 80, 5), one, synthetic_cost);
    const SimulationResult y = simulate(poisson_requests(300, 20, 700, 80, 5), same, synthetic_cost);
    BOOST_TEST(x.steps == y.steps);
    BOOST_TEST(x.end_s == y.end_s);
    BOOST_CHECK_THROW(simulate(burst, [&] { EngineLimits bad = hybrid; bad.sliding_window = 0; return bad; }(), synthetic_cost), Error);
}

// Mamba groups (Nemotron-H under vLLM's hybrid allocator) hold one block per request whatever its
// length: with 100 blocks of 16 tokens and six state groups, 20 requests of 100 + 20 tokens (7 to 8
// attention blocks and 6 state blocks each) run 7 or 8 at a time where they would run 12 or more
// without the state, and a prompt that fits in 94 blocks of its own no longer fits.
BOOST_AUTO_TEST_CASE(mamba_groups_hold_one_block_per_request) {
    EngineLimits plain;
    plain.kv_cache_blocks = 100;
    plain.kv_cache_tokens = 100 * 16;
    plain.block_size_tokens = 16;
    EngineLimits mamba = plain;
    mamba.state_groups = 6;
    const auto peak = [](const SimulationResult& r) {
        std::int64_t m = 0;
        for (const TimelinePoint& p : r.timeline) m = std::max(m, p.running);
        return m;
    };
    std::vector<Request> small;
    for (int i = 0; i < 20; ++i) small.push_back({0.0, 100, 20, 0});
    const SimulationResult a = simulate(small, plain, synthetic_cost, 50'000'000, 0, 1000);
    const SimulationResult b = simulate(small, mamba, synthetic_cost, 50'000'000, 0, 1000);
    BOOST_TEST_MESSAGE("plain peak " << peak(a) << ", with state " << peak(b));
    BOOST_TEST(peak(a) >= 12);  // 100 / 8
    BOOST_TEST(peak(b) >= 7);   // 100 / (8 + 6)
    BOOST_TEST(peak(b) <= 8);   // 100 / (7 + 6)
    BOOST_TEST(test::throws_naming([&] { simulate({{0, 1570, 10}}, mamba, synthetic_cost); }, "does not fit in a KV cache"));
    BOOST_TEST(simulate({{0, 1500, 10}}, plain, synthetic_cost).requests.size() == 1u);
    BOOST_CHECK_THROW(simulate(small, [&] { EngineLimits bad = mamba; bad.state_groups = -1; return bad; }(), synthetic_cost), Error);
    // vLLM 0.11.0 runs these models without prefix caching: a shared prefix is prefilled every time.
    std::vector<Request> shared;
    for (int i = 0; i < 8; ++i) shared.push_back({0.1 * i, 96, 4, 64});
    const SimulationResult cached = simulate(shared, plain, synthetic_cost);
    EngineLimits uncached_limits = mamba;
    uncached_limits.prefix_caching = false;
    const SimulationResult uncached = simulate(shared, uncached_limits, synthetic_cost);
    BOOST_TEST(cached.prefix_hit_tokens > 0);
    BOOST_TEST(uncached.prefix_hit_tokens == 0);
}


BOOST_AUTO_TEST_CASE(a_frontend_latency_adds_exactly_itself_to_ttft_and_e2e) {
    EngineLimits limits;
    limits.max_num_batched_tokens = 512;
    const std::vector<Request> one = {{0.0, 2000, 100}};
    const SimulationResult bare = simulate(one, limits, synthetic_cost);
    limits.frontend_latency_s = 0.25;
    const SimulationResult served = simulate(one, limits, synthetic_cost);
    BOOST_TEST(std::abs(served.requests[0].ttft_s() - bare.requests[0].ttft_s() - 0.25) < 1e-12);
    BOOST_TEST(std::abs(served.requests[0].e2e_s() - bare.requests[0].e2e_s() - 0.25) < 1e-12);
    BOOST_TEST(std::abs(served.requests[0].tpot_s() - bare.requests[0].tpot_s()) < 1e-15);
    // A closed loop of one user: each request waits for the frontend before the engine sees it,
    // so the run lasts the sum of the latencies, each with the frontend in it.
    const std::vector<Request> three(3, Request{0.0, 500, 20});
    const SimulationResult loop = simulate(three, limits, synthetic_cost, 1'000'000, 1);
    double sum = 0;
    for (const RequestResult& q : loop.requests) sum += q.e2e_s();
    BOOST_TEST(std::abs(loop.end_s - sum) < 1e-9);
    limits.frontend_latency_s = 0;
    const SimulationResult tight = simulate(three, limits, synthetic_cost, 1'000'000, 1);
    BOOST_TEST(std::abs(loop.end_s - tight.end_s - 3 * 0.25) < 1e-9);
    // Little's law still holds: the frontend's time counts as time in the system.
    limits.frontend_latency_s = 0.05;
    const SimulationResult busy = simulate(poisson_requests(400, 20, 300, 60, 7), limits, synthetic_cost);
    const LittlesLaw l = littles_law(busy);
    BOOST_TEST(std::abs(l.mean_in_system / l.throughput_times_latency - 1) < kLittleTolerance);
}

// The frontend's serial part is one server: a burst's k-th request reaches the engine k of its
// times after the first. With 1 s a request (far longer than the steps that serve one) each request
// of a burst of five is served alone, its TTFT exactly k s more than the first's; a lone request's
// TTFT rises by the serial time once; Little's law counts the wait at the frontend.
BOOST_AUTO_TEST_CASE(the_frontends_serial_part_queues_a_burst) {
    EngineLimits limits;
    const std::vector<Request> one = {{0.0, 300, 1}};
    const SimulationResult bare = simulate(one, limits, synthetic_cost);
    limits.frontend_serial_s = 1.0;
    const SimulationResult lone = simulate(one, limits, synthetic_cost);
    BOOST_TEST(std::abs(lone.requests[0].ttft_s() - bare.requests[0].ttft_s() - 1.0) < 1e-12);
    const std::vector<Request> burst(5, Request{0.0, 300, 1});
    const SimulationResult r = simulate(burst, limits, synthetic_cost, 1'000'000, 5);
    for (std::size_t k = 0; k < burst.size(); ++k) {
        BOOST_TEST(r.requests[k].arrival_s == 0.0);  // the client's send time
        BOOST_TEST(std::abs(r.requests[k].ttft_s() - r.requests[0].ttft_s() - static_cast<double>(k)) < 1e-9, "request " << k);
    }
    limits.frontend_serial_s = 0.004;
    limits.frontend_latency_s = 0.02;
    const SimulationResult busy = simulate(poisson_requests(400, 40, 300, 60, 7), limits, synthetic_cost);
    const LittlesLaw l = littles_law(busy);
    BOOST_TEST(std::abs(l.mean_in_system / l.throughput_times_latency - 1) < kLittleTolerance);
    limits.frontend_serial_s = -1;
    BOOST_CHECK_THROW(simulate(one, limits, synthetic_cost), Error);
}

// In rounds (an asyncio frontend: EngineLimits::frontend_rounds) a burst reaches the engine
// together, after all of it was rendered: with 1 s a request each of a burst of five has its TTFT
// 5 s above a bare engine's at least, and the first request 4 s later than first come first served
// gives it. Requests sent while a round runs wait for the next, together (two sent at 0.5 s and
// 0.6 s are rendered from 5 s to 7 s and both go on at 7 s, where first come first served lets the
// first through at 6 s). A lone request pays the serial time once either way, and requests that never
// overlap at the frontend get the same times in both disciplines.
BOOST_AUTO_TEST_CASE(an_event_loop_frontend_passes_a_burst_in_rounds) {
    EngineLimits limits;
    limits.frontend_serial_s = 1.0;
    limits.frontend_rounds = true;
    const std::vector<Request> one = {{0.0, 300, 1}};
    EngineLimits bare_limits;
    const double bare_ttft = simulate(one, bare_limits, synthetic_cost).requests[0].ttft_s();
    BOOST_TEST(std::abs(simulate(one, limits, synthetic_cost).requests[0].ttft_s() - bare_ttft - 1.0) < 1e-12);
    std::vector<Request> burst(5, Request{0.0, 300, 1});
    burst.push_back(Request{0.5, 300, 1});
    burst.push_back(Request{0.6, 300, 1});
    const SimulationResult r = simulate(burst, limits, synthetic_cost);
    for (std::size_t k = 0; k < 5; ++k) BOOST_TEST(r.requests[k].ttft_s() >= bare_ttft + 5.0 - 1e-9, "request " << k);
    BOOST_TEST(r.requests[0].ttft_s() < bare_ttft + 5.0 + 0.5);
    BOOST_TEST(r.requests[5].arrival_s == 0.5);
    BOOST_TEST(r.requests[5].ttft_s() >= 7.0 - 0.5 + bare_ttft - 1e-9);
    BOOST_TEST(r.requests[6].ttft_s() >= 7.0 - 0.6 + bare_ttft - 1e-9);
    limits.frontend_rounds = false;
    const SimulationResult fifo = simulate(burst, limits, synthetic_cost);
    BOOST_TEST(fifo.requests[5].ttft_s() < 7.0 - 0.5 + bare_ttft - 0.5);
    BOOST_TEST(std::abs(r.requests[0].ttft_s() - fifo.requests[0].ttft_s() - 4.0) < 0.5);
    // Sparse arrivals (one every 10 s, a 4 ms serial time): the same either way.
    std::vector<Request> sparse;
    for (int i = 0; i < 20; ++i) sparse.push_back(Request{10.0 * i, 300, 20});
    limits.frontend_serial_s = 0.004;
    const SimulationResult sparse_fifo = simulate(sparse, limits, synthetic_cost);
    limits.frontend_rounds = true;
    const SimulationResult sparse_rounds = simulate(sparse, limits, synthetic_cost);
    for (std::size_t k = 0; k < sparse.size(); ++k)
        BOOST_TEST(std::abs(sparse_rounds.requests[k].ttft_s() - sparse_fifo.requests[k].ttft_s()) < 1e-9, "request " << k);
    // A closed loop of four users with equal requests: the later requests, sent as users' requests
    // end, pass first come first served even when they end in the same step (1 s apart).
    limits.frontend_serial_s = 1.0;
    const std::vector<Request> eight(8, Request{0.0, 300, 5});
    const SimulationResult loop = simulate(eight, limits, synthetic_cost, 1'000'000, 4);
    for (std::size_t k = 5; k < 8; ++k)
        BOOST_TEST(std::abs(loop.requests[k].ttft_s() - loop.requests[k - 1].ttft_s() - 1.0) < 1e-9, "request " << k);
    limits.frontend_serial_s = 0.004;
    // Little's law counts the wait at the frontend, on a burst and on Poisson arrivals.
    limits.frontend_latency_s = 0.02;
    const SimulationResult burst_run = simulate(std::vector<Request>(200, Request{0.0, 300, 60}), limits, synthetic_cost);
    const LittlesLaw lb = littles_law(burst_run);
    BOOST_TEST(std::abs(lb.mean_in_system / lb.throughput_times_latency - 1) < kLittleTolerance);
    // Arrivals that are not finite, negative or out of order are refused in one line.
    for (const std::vector<Request>& bad : {std::vector<Request>{{std::nan(""), 300, 1}}, std::vector<Request>{{-1.0, 300, 1}},
                                            std::vector<Request>{{2.0, 300, 1}, {0.0, 300, 1}},
                                            std::vector<Request>{{-std::numeric_limits<double>::infinity(), 300, 1}}})
        BOOST_CHECK_THROW(simulate(bad, limits, synthetic_cost), Error);
    const SimulationResult busy = simulate(poisson_requests(400, 40, 300, 60, 7), limits, synthetic_cost);
    const LittlesLaw l = littles_law(busy);
    BOOST_TEST(std::abs(l.mean_in_system / l.throughput_times_latency - 1) < kLittleTolerance);
}

BOOST_AUTO_TEST_CASE(requests_all_sent_at_once_run_in_waves) {
    // 24 requests at time 0 through 8 sequence slots: the batch holds 8, and the queue falls from
    // 16 to 8 to 0 as each wave of equal requests finishes together.
    EngineLimits limits;
    limits.max_num_seqs = 8;
    const std::vector<Request> burst(24, Request{0.0, 100, 50});
    const SimulationResult r = simulate(burst, limits, synthetic_cost, 1'000'000, 24, 100'000);
    std::set<std::int64_t> queues;
    std::int64_t largest_batch = 0;
    for (const TimelinePoint& p : r.timeline) {
        queues.insert(p.waiting);
        largest_batch = std::max(largest_batch, p.running);
    }
    BOOST_TEST(largest_batch == 8);
    BOOST_TEST(queues.count(16) == 1u);
    BOOST_TEST(queues.count(8) == 1u);
    BOOST_TEST(queues.count(12) == 0u);  // waves, not a trickle
    // Each wave finishes at one time: three distinct finish times.
    std::set<double> finishes;
    for (const RequestResult& q : r.requests) finishes.insert(q.finish_s);
    BOOST_TEST(finishes.size() == 3u);
}

BOOST_AUTO_TEST_CASE(an_overloaded_run_is_an_answer_not_a_figure) {
    const EnginePricing p = synthetic_pricing(16);
    const Traffic t = fixed_traffic(600, 500, 100);
    // 16 sequences at about 4.3 ms a step carry about 35 requests/s of 100 tokens: 200 is far beyond.
    const ServeStats over = run_traffic(t, p, Slo{}, 200.0);
    BOOST_TEST(over.overloaded);
    BOOST_TEST(std::abs(over.offered_requests_per_s - 200.0) < 30.0);
    BOOST_TEST(over.completed_requests_per_s < 0.5 * over.offered_requests_per_s);
    BOOST_TEST(over.completed_requests_per_s > 0.0);
    const ServeStats light = run_traffic(t, p, Slo{}, 5.0);
    BOOST_TEST(!light.overloaded);
    // JSON: latencies null, the flag and the completed rate set.
    CapacityPlan plan;
    SchemeCapacity row;
    row.name = "bf16";
    row.fits = true;
    row.stats = over;
    plan.schemes.push_back(row);
    const nlohmann::json j = serve_json(plan);
    BOOST_TEST(j[0]["overloaded"].get<bool>());
    for (const char* k : {"ttft_s", "tpot_s", "itl_s", "e2e_s", "queue_s"}) BOOST_TEST(j[0][k].is_null());
    BOOST_TEST(j[0]["completed_requests_per_s"].get<double>() == over.completed_requests_per_s);
}

BOOST_AUTO_TEST_CASE(the_binding_constraint_is_named) {
    const EnginePricing p = synthetic_pricing(16);
    const Traffic t = fixed_traffic(1000, 500, 100);
    // No SLO: the running-sequence limit binds (the batch stays at 16).
    const RateSearch free = sustained_rate_search(t, p, Slo{});
    BOOST_TEST_REQUIRE(free.rate.has_value());
    BOOST_TEST(free.binding.constraint == "max_num_seqs");
    BOOST_TEST(free.binding.sequences_in_cache > 0.0);
    // A tight TPOT target binds before it.
    Slo tight;
    tight.tpot = SloTarget{4.25e-3, 0.5};
    const RateSearch slo = sustained_rate_search(t, p, tight);
    BOOST_TEST_REQUIRE(slo.rate.has_value());
    BOOST_TEST(slo.binding.constraint == "tpot_slo");
    BOOST_TEST(*slo.rate < *free.rate);
    // A cache of about two of the traffic's sequences binds by KV capacity, and says how many it holds.
    EnginePricing small = p;
    small.limits.kv_cache_tokens = 1250;
    const RateSearch kv = sustained_rate_search(t, small, Slo{});
    BOOST_TEST(kv.binding.constraint == "kv_capacity");
    BOOST_TEST(std::abs(kv.binding.sequences_in_cache - 1250.0 / 600.0) < 1e-9);
    BOOST_TEST(kv.binding.detail.find("2.1 of the traffic's sequences") != std::string::npos);
}


BOOST_AUTO_TEST_CASE(host_time_per_sequence_adds_to_a_step_or_hides_behind_it) {
    const engine::EngineCatalog catalog = engine::load_engine_catalog(quantplan::test::source_dir() / "assets" / "engines" / "profiles",
                                                                      quantplan::test::source_dir() / "assets" / "engines" / "fit" / "engine-fit.json");
    engine::EngineSetup setup = engine::make_engine_setup(catalog, "vllm@0.10.1", true);
    const ModelConfig m = quantplan::test::bundled_model("qwen3-8b");
    const GpuProfile g = quantplan::test::bundled_gpu("h100-sxm");
    Workload w;
    w.context_tokens = 4096;
    w.engine.max_num_batched_tokens = 8192;
    const SchemeCosts c = scheme_costs(m, compress_inventory(tensor_inventory(m)), parse_scheme("bf16"), w.kv, g);
    const Admission a = engine::engine_admission(c, m, g, setup, w);
    setup.profile.serving = {};
    setup.profile.defaults.host_overlaps_gpu = false;
    const EnginePricing base = engine_pricing(c, m, g, setup, w, a);
    BOOST_TEST(base.limits.frontend_latency_s == setup.profile.step.ttft_overhead_s);  // unfitted: the step fit's overhead
    setup.profile.serving.host_per_sequence_s = 1e-4;
    setup.profile.serving.host_per_prefill_sequence_s = 2e-3;
    setup.profile.serving.frontend_latency_s = 0.03;
    setup.profile.serving.fitted = true;
    const EnginePricing with = engine_pricing(c, m, g, setup, w, a);
    BOOST_TEST(with.limits.frontend_latency_s == 0.03);
    StepShape shape;
    shape.decode_sequences = 10;
    shape.decode_context_tokens = 10 * 1000;
    shape.prefill_tokens = 256;
    shape.prefill_sequences = 2;
    shape.prefill_chunks = {{0, 128}, {0, 128}};
    // Serial host (vLLM): 12 sequences x 0.1 ms + 2 prefilling x 2 ms more.
    BOOST_TEST(std::abs(with.cost(shape) - base.cost(shape) - (12 * 1e-4 + 2 * 2e-3)) < 1e-12);
    // Overlapped (SGLang's scheduler): the longer of the two.
    setup.profile.defaults.host_overlaps_gpu = true;
    const EnginePricing overlapped = engine_pricing(c, m, g, setup, w, a);
    BOOST_TEST(std::abs(overlapped.cost(shape) - std::max(base.cost(shape), 12 * 1e-4 + 2 * 2e-3)) < 1e-12);
}

// A long prompt is prefilled in chunks of the token budget, and each chunk attends to the cache its
// earlier chunks wrote: a lone 32K-token request's TTFT in the simulator is the step model's own
// prefill of that prompt (engine_prefill, chunk by chunk), and a chunk late in a prompt costs more
// than the same chunk at its start. Before the chunks kept their positions, the simulator priced
// every chunk as a prompt's first, and long prompts came out low.
BOOST_AUTO_TEST_CASE(a_prefill_chunk_attends_to_the_cache_before_it) {
    const engine::EngineCatalog catalog = engine::load_engine_catalog(quantplan::test::source_dir() / "assets" / "engines" / "profiles",
                                                                      quantplan::test::source_dir() / "assets" / "engines" / "fit" / "engine-fit.json");
    engine::EngineSetup setup = engine::make_engine_setup(catalog, "vllm@0.10.1", true);
    setup.profile.serving = {};
    const ModelConfig m = quantplan::test::bundled_model("qwen3-8b");
    const GpuProfile g = quantplan::test::bundled_gpu("a100-80gb");
    Workload w;
    w.context_tokens = 32768 + 16;
    w.engine.max_num_batched_tokens = 2048;
    const SchemeCosts c = scheme_costs(m, compress_inventory(tensor_inventory(m)), parse_scheme("bf16"), w.kv, g);
    const Admission a = engine::engine_admission(c, m, g, setup, w);
    const EnginePricing pricing = engine_pricing(c, m, g, setup, w, a);
    const std::vector<Request> lone{{0.0, 32768, 1, 0}};
    const SimulationResult r = simulate(lone, pricing.limits, pricing.cost);
    const double expected = engine::engine_prefill(c, m, g, setup, w, 32768).time_s;  // the step fit's overhead = the frontend's
    BOOST_TEST(r.steps == 16);
    BOOST_TEST(std::abs(r.requests[0].ttft_s() / expected - 1) < 1e-9, "TTFT " << r.requests[0].ttft_s() << " s, prefill " << expected << " s");
    // One step, the same 2,048 tokens: at a prompt's start, 30,000 tokens into it, and as two
    // sequences' first 1,024 (less causal attention than one prompt's first 2,048).
    const auto step = [&](std::vector<PrefillChunk> chunks) {
        StepShape s;
        for (const PrefillChunk& k : chunks) {
            s.prefill_tokens += k.tokens;
            ++s.prefill_sequences;
        }
        s.prefill_chunks = std::move(chunks);
        return pricing.cost(s);
    };
    const double first = step({{0, 2048}}), late = step({{30000, 2048}}), two = step({{0, 1024}, {0, 1024}});
    BOOST_TEST(late > 1.5 * first, "late chunk " << late << " s, first chunk " << first << " s");
    BOOST_TEST(two < first);
    BOOST_TEST(two > 0.9 * first);  // the linears, the bulk of a 2,048-token step, are the same
}

BOOST_AUTO_TEST_SUITE_END()

// Capacity planning's pieces (core/serve/capacity.h) on the synthetic step cost.
BOOST_AUTO_TEST_SUITE(serve_capacity)

BOOST_AUTO_TEST_CASE(length_specs_draw_what_they_say) {
    std::mt19937_64 rng(7);
    const LengthSpec u = parse_length_spec("uniform:100:200", "--isl");
    const LengthSpec n = parse_length_spec("normal:1000:100", "--isl");
    const LengthSpec l = parse_length_spec("lognormal:300:0.5", "--osl");
    double sum_n = 0;
    std::vector<std::int64_t> logs;
    std::int64_t lo = 1 << 30, hi = 0;
    for (int i = 0; i < 20000; ++i) {
        const std::int64_t x = draw_length(u, rng);
        lo = std::min(lo, x);
        hi = std::max(hi, x);
        sum_n += static_cast<double>(draw_length(n, rng));
        logs.push_back(draw_length(l, rng));
    }
    BOOST_TEST(lo == 100);
    BOOST_TEST(hi == 200);
    BOOST_TEST(std::abs(sum_n / 20000 - 1000) < 5);
    std::nth_element(logs.begin(), logs.begin() + 10000, logs.end());
    BOOST_TEST(std::abs(static_cast<double>(logs[10000]) - 300) < 10);  // the median
    BOOST_TEST(max_length(parse_length_spec("2000", "--isl")) == 2000);
    BOOST_TEST(max_length(u) == 200);
    // A file: one length a line, a header and comments skipped.
    const std::string path = "/tmp/quantplan_tst_serve_lengths.csv";
    {
        std::ofstream f(path);
        f << "input_tokens\n# a comment\n120\n  340,extra\n{\"len\": 56}\n";
    }
    const LengthSpec f = parse_length_spec("file:" + path, "--isl");
    BOOST_TEST(f.values == (std::vector<std::int64_t>{120, 340, 56}), boost::test_tools::per_element());
    BOOST_TEST(max_length(f) == 340);
    {
        std::ofstream e(path);
        e << "header only\n";
    }
    BOOST_TEST(test::throws_naming([&] { parse_length_spec("file:" + path, "--isl"); }, "holds no lengths"));
    for (const char* bad : {"0", "-5", "12.5", "uniform:3", "uniform:9:2", "normal:10:-1", "gamma:1:2", "lognormal:100:9", "abc", "99999999999"})
        BOOST_TEST(test::throws_naming([&] { parse_length_spec(bad, "--isl"); }, "--isl"), bad);
}

BOOST_AUTO_TEST_CASE(the_same_seed_gives_the_same_prompts_at_every_rate) {
    Traffic t;
    t.requests = 50;
    t.input = parse_length_spec("uniform:10:5000", "--isl");
    const std::vector<Request> slow = make_requests(t, 0.5), fast = make_requests(t, 50);
    for (std::size_t i = 0; i < slow.size(); ++i) BOOST_TEST(slow[i].input_tokens == fast[i].input_tokens);
    BOOST_TEST(slow.back().arrival_s > 50 * fast.back().arrival_s);
    BOOST_TEST(make_requests(t, 0.0).back().arrival_s == 0.0);
}

BOOST_AUTO_TEST_CASE(slo_targets_parse_with_their_percentile) {
    BOOST_TEST(parse_slo(std::string("2"), "--slo-ttft")->quantile == 0.99);
    BOOST_TEST(parse_slo(std::string("0.05@p90"), "--slo-tpot")->quantile == 0.9);
    BOOST_TEST(parse_slo(std::string("0.05@p50"), "--slo-tpot")->seconds == 0.05);
    BOOST_TEST(!parse_slo(std::nullopt, "--slo-e2e").has_value());
    for (const char* bad : {"0", "-1", "x", "1@p95", "1@"})
        BOOST_TEST(test::throws_naming([&] { parse_slo(std::string(bad), "--slo-e2e"); }, "--slo-e2e"), bad);
}

BOOST_AUTO_TEST_CASE(a_tighter_slo_lowers_the_highest_rate) {
    EnginePricing p;
    p.cost = synthetic_cost;
    p.limits.kv_cache_tokens = 200'000;
    Traffic t;
    t.requests = 1000;  // the search's own minimum, so the runs below are the ones it made
    t.input = parse_length_spec("1000", "--isl");
    t.output = parse_length_spec("200", "--osl");
    const std::optional<double> free = max_sustained_rate(t, p, Slo{});
    Slo tight;
    tight.tpot = SloTarget{0.0075, 0.99};
    const std::optional<double> limited = max_sustained_rate(t, p, tight);
    BOOST_TEST_REQUIRE(free.has_value());
    BOOST_TEST_REQUIRE(limited.has_value());
    BOOST_TEST(*limited < 0.9 * *free, *limited << " vs " << *free);
    // At the rate found the SLO holds and the run keeps up; at 30% above it, it does not.
    const ServeStats at = run_traffic(t, p, tight, *limited);
    BOOST_TEST(at.meets_slo);
    BOOST_TEST(at.tpot_s.p99 <= 0.0075);
    BOOST_TEST(!run_traffic(t, p, tight, *limited * 1.3).meets_slo);
    // An SLO below one step is never met.
    Slo impossible;
    impossible.tpot = SloTarget{0.003, 0.5};
    BOOST_TEST(!max_sustained_rate(t, p, impossible).has_value());
}

BOOST_AUTO_TEST_CASE(arrivals_have_the_spread_they_are_given) {
    Traffic t;
    t.requests = 20000;
    const auto gap_cv = [&](const std::string& spec) {
        t.arrival = parse_arrival(spec, "--arrival");
        const std::vector<Request> r = make_requests(t, 10.0);
        double sum = 0, sq = 0;
        for (std::size_t i = 1; i < r.size(); ++i) {
            const double g = r[i].arrival_s - r[i - 1].arrival_s;
            sum += g;
            sq += g * g;
        }
        const double n = static_cast<double>(r.size() - 1), mean = sum / n;
        const double cv = std::sqrt(sq / n - mean * mean) / mean;
        // 10 requests/s: the mean gap within 5 standard errors (cv x 0.1 / sqrt(n)).
        BOOST_TEST(std::abs(mean - 0.1) < 5 * std::max(cv, 0.5) * 0.1 / std::sqrt(n), spec << ": mean gap " << mean << ", cv " << cv);
        return cv;
    };
    BOOST_TEST(std::abs(gap_cv("poisson") - 1.0) < 0.03);
    BOOST_TEST(std::abs(gap_cv("gamma:1") - 1.0) < 0.03);
    BOOST_TEST(std::abs(gap_cv("gamma:3") - 3.0) < 0.25);
    BOOST_TEST(std::abs(gap_cv("gamma:0.5") - 0.5) < 0.02);
    t.arrival = parse_arrival("burst", "--arrival");
    BOOST_TEST(make_requests(t, 10.0).back().arrival_s == 0.0);
    for (const char* bad : {"gamma", "gamma:0", "gamma:-1", "gamma:x", "uniform", "Poisson"})
        BOOST_TEST(test::throws_naming([&] { parse_arrival(bad, "--arrival"); }, "--arrival"), bad);
}

BOOST_AUTO_TEST_CASE(a_trace_is_replayed_and_scaled_to_a_rate) {
    const std::string path = "/tmp/quantplan_tst_serve_trace.csv";
    {
        std::ofstream f(path);
        f << "arrival_s,input_tokens,output_tokens\n10.0,100,20\n12.0,300,40\n{\"timestamp\": 11.0, \"input_length\": 200, \"output_length\": 30}\n";
    }
    const std::vector<Request> r = read_trace(path, "--trace");
    BOOST_TEST_REQUIRE(r.size() == 3u);
    BOOST_TEST(r[0].arrival_s == 0.0);  // relative to the first, sorted
    BOOST_TEST(r[1].input_tokens == 200);
    BOOST_TEST(r[2].arrival_s == 2.0);
    BOOST_TEST(trace_rate(r) == 1.0);
    Traffic t;
    t.trace = r;
    BOOST_TEST(make_requests(t, 0.0)[2].arrival_s == 2.0);   // as recorded
    BOOST_TEST(make_requests(t, 4.0)[2].arrival_s == 0.5);   // four times as fast
    for (const char* bad : {"1.0,100\n", "arrival,in,out\n", "1.0,0,5\n", "{\"arrival_s\": 1}\n", "-3,10,10\n", "1,10.5,10\n"}) {
        {
            std::ofstream f(path);
            f << bad;
        }
        BOOST_TEST(test::throws_naming([&] { read_trace(path, "--trace"); }, "--trace"), bad);
    }
    BOOST_TEST(test::throws_naming([] { read_trace("/nonexistent/trace.csv", "--trace"); }, "--trace"));
}

BOOST_AUTO_TEST_CASE(a_shared_prefix_is_prefilled_once) {
    EngineLimits limits;
    limits.max_num_batched_tokens = 512;
    // Ten requests a second apart, each alone in the engine: the first prefills 2,000 tokens, the
    // rest only the 500 after the shared 1,500 (the cost reads every prefilled token).
    std::vector<Request> r;
    for (int i = 0; i < 10; ++i) r.push_back({static_cast<double>(i), 2000, 10, 1500});
    const SimulationResult cached = simulate(r, limits, synthetic_cost);
    for (Request& q : r) q.shared_prefix_tokens = 0;
    const SimulationResult plain = simulate(r, limits, synthetic_cost);
    BOOST_TEST(cached.prefix_hit_tokens == 9 * 1500);
    BOOST_TEST(plain.prefix_hit_tokens == 0);
    BOOST_TEST(cached.requests[0].ttft_s() == plain.requests[0].ttft_s());
    // 2,000 tokens in chunks of 512 is 4 steps; 500 is 1.
    BOOST_TEST(cached.requests[5].ttft_s() < 0.3 * plain.requests[5].ttft_s());
    BOOST_TEST(test::throws_naming([] { simulate({{0.0, 100, 10, 200}}, EngineLimits{}, synthetic_cost); }, "--prefix"));
}

BOOST_AUTO_TEST_CASE(a_shared_prefix_is_held_once_in_the_kv_cache) {
    EngineLimits limits;
    limits.kv_cache_tokens = 1 << 16;  // 4,096 blocks of 16
    // One request prefills the prefix; eight arrive together after it finished and run side by side.
    std::vector<Request> r = {{0.0, 2000, 10, 1500}};
    for (int i = 0; i < 8; ++i) r.push_back({10.0, 2000, 200, 1500});
    const SimulationResult cached = simulate(r, limits, synthetic_cost, 50'000'000, 0, 1000);
    for (Request& q : r) q.shared_prefix_tokens = 0;
    const SimulationResult plain = simulate(r, limits, synthetic_cost, 50'000'000, 0, 1000);
    const auto peak = [](const SimulationResult& s) {
        double m = 0;
        for (const TimelinePoint& p : s.timeline) m = std::max(m, p.kv_utilization);
        return m;
    };
    // 1,500 shared tokens are 93 full blocks, held once: 93 + 8 x 33 blocks at the peak against
    // 8 x 126 without the cache (2,000 + 200 tokens: up to 138 blocks a sequence).
    BOOST_TEST(cached.prefix_cache_blocks == 93);
    BOOST_TEST(plain.prefix_cache_blocks == 0);
    const double blocks = 4096.0;
    BOOST_TEST(peak(plain) * blocks >= 8 * 126 - 1e-6);
    BOOST_TEST(peak(cached) * blocks <= 93 + 8 * (138 - 93) + 1e-6);
    BOOST_TEST(peak(cached) < 0.5 * peak(plain));
}

BOOST_AUTO_TEST_CASE(the_timeline_is_bounded_and_follows_the_run) {
    EngineLimits limits;
    limits.max_num_seqs = 32;
    const std::vector<Request> r = poisson_requests(5000, 40.0, 500, 100, 7);
    const SimulationResult s = simulate(r, limits, synthetic_cost, 50'000'000, 0, 100);
    BOOST_TEST(s.timeline.size() >= 100u);
    BOOST_TEST(s.timeline.size() < 200u);
    double last = -1;
    std::int64_t most = 0, preempted = 0;
    for (const TimelinePoint& p : s.timeline) {
        BOOST_TEST(p.t_s >= last);
        last = p.t_s;
        BOOST_TEST(p.running <= limits.max_num_seqs);
        BOOST_TEST(p.kv_utilization >= 0.0);
        BOOST_TEST(p.kv_utilization <= 1.0);
        BOOST_TEST(p.preemptions >= preempted);
        preempted = p.preemptions;
        most = std::max(most, p.running);
    }
    BOOST_TEST(last <= s.end_s);
    BOOST_TEST(most > 1);
    // None kept unless asked.
    BOOST_TEST(simulate(r, limits, synthetic_cost).timeline.empty());
}

BOOST_AUTO_TEST_CASE(the_prefill_first_scheduler_never_mixes_prefill_and_decode) {
    for (const bool whole : {false, true}) {
        EngineLimits limits;
        limits.max_num_seqs = 64;
        limits.max_num_batched_tokens = whole ? 4096 : 1024;
        limits.prefill_first = true;
        limits.whole_prompt_prefill = whole;
        std::int64_t mixed = 0, prefill_steps = 0, decode_steps = 0, largest_chunk = 0;
        const StepCost recording = [&](const StepShape& shape) {
            mixed += shape.prefill_tokens > 0 && shape.decode_sequences > 0 ? 1 : 0;
            prefill_steps += shape.prefill_tokens > 0 ? 1 : 0;
            decode_steps += shape.decode_sequences > 0 ? 1 : 0;
            largest_chunk = std::max(largest_chunk, shape.prefill_tokens);
            return synthetic_cost(shape);
        };
        const std::vector<Request> r = poisson_requests(600, 20.0, 1500, 200, 3);
        const SimulationResult s = simulate(r, limits, recording);
        BOOST_TEST(mixed == 0);
        BOOST_TEST(prefill_steps > 0);
        BOOST_TEST(decode_steps > 0);
        BOOST_TEST(largest_chunk <= limits.max_num_batched_tokens);
        const LittlesLaw l = littles_law(s);
        BOOST_TEST(std::abs(l.mean_in_system - l.throughput_times_latency) <= kLittleTolerance * l.throughput_times_latency);
        // A lone request under whole-prompt prefill takes one prefill step of its whole prompt.
        if (whole) {
            const SimulationResult one = simulate({{0.0, 3000, 2}}, limits, synthetic_cost);
            StepShape all;
            all.prefill_tokens = 3000;
            BOOST_TEST(std::abs(one.requests[0].ttft_s() - synthetic_cost(all)) < 1e-12);
        }
    }
    // The V1 scheduler on the same traffic does mix them (so the check above can fail).
    EngineLimits v1;
    v1.max_num_seqs = 64;
    v1.max_num_batched_tokens = 1024;
    std::int64_t mixed = 0;
    simulate(poisson_requests(600, 20.0, 1500, 200, 3), v1, [&](const StepShape& shape) {
        mixed += shape.prefill_tokens > 0 && shape.decode_sequences > 0 ? 1 : 0;
        return synthetic_cost(shape);
    });
    BOOST_TEST(mixed > 0);
}

// vLLM V0's multi-step scheduling: a prefill step streams the first token, then each decode window
// runs its passes back to back and streams their tokens as one chunk (one gap a window), a request
// that ends inside a window waits for its end, and TPOT is one pass.
BOOST_AUTO_TEST_CASE(a_multi_step_window_streams_its_tokens_together) {
    EngineLimits limits;
    limits.max_num_seqs = 64;
    limits.max_num_batched_tokens = 4096;
    limits.prefill_first = true;
    limits.whole_prompt_prefill = true;
    limits.multi_steps = 8;
    std::int64_t largest_window = 0;
    const StepCost window = [&](const StepShape& s) {
        largest_window = std::max(largest_window, s.steps);
        StepShape pass = s;
        pass.steps = 1;
        return static_cast<double>(s.steps) * synthetic_cost(pass);
    };
    StepShape prefill, pass;
    prefill.prefill_tokens = 1000;
    pass.decode_sequences = 1;
    pass.decode_context_tokens = 1001;
    const double prefill_s = synthetic_cost(prefill), pass_s = synthetic_cost(pass);
    // A pass's context grows by a token (50 ns of the 4.02 ms pass here): the windows' times match
    // the first pass's within 1%.
    constexpr double kContextGrowth = 0.01, kExact = 1e-9;
    for (const std::int64_t out : {33, 30}) {
        const SimulationResult one = simulate({{0.0, 1000, out}}, limits, window);
        BOOST_TEST(one.steps == 5);                     // the prefill and four windows (the last one cut short for 30)
        BOOST_TEST(one.requests[0].output_tokens == out);
        BOOST_TEST(one.requests[0].ttft_s() == prefill_s, boost::test_tools::tolerance(kExact));
        BOOST_TEST(one.requests[0].finish_s == prefill_s + 4 * 8 * pass_s, boost::test_tools::tolerance(kContextGrowth));
        BOOST_TEST(one.itl.total == 4);                 // one streamed chunk a window
        BOOST_TEST(one.itl.sum_s / 4 == 8 * pass_s, boost::test_tools::tolerance(kContextGrowth));
    }
    BOOST_TEST(largest_window == 8);
    // Without it, every pass streams its token.
    limits.multi_steps = 1;
    const SimulationResult plain = simulate({{0.0, 1000, 33}}, limits, window);
    BOOST_TEST(plain.steps == 33);
    BOOST_TEST(plain.itl.total == 32);
    BOOST_TEST(plain.requests[0].finish_s == prefill_s + 32 * pass_s, boost::test_tools::tolerance(kContextGrowth));
    // Each decoding sequence holds N - 1 lookahead slots beyond its next token: with 16-token blocks
    // a window of 32 keeps two more blocks a sequence than one pass does, so a cache of 8 requests'
    // worth of blocks preempts only with the windows.
    {
        EngineLimits tight = limits;
        tight.block_size_tokens = 16;
        tight.kv_cache_tokens = 8 * 16 * 8;  // 8 requests of 8 blocks (100 prompt + 28 output tokens)
        const std::vector<Request> eight(8, Request{0.0, 100, 28});
        tight.multi_steps = 1;
        const SimulationResult without = simulate(eight, tight, window);
        tight.multi_steps = 32;
        const SimulationResult with = simulate(eight, tight, window);
        BOOST_TEST(without.preemptions == 0);
        BOOST_TEST(with.preemptions > 0);
        for (const RequestResult& q : with.requests) BOOST_TEST(q.output_tokens == 28);
    }
    // Out of its range, with speculation or with chunked prefill (mixed steps): one error naming the option.
    limits.multi_steps = 4;
    limits.prefill_first = false;
    BOOST_TEST(test::throws_naming([&] { simulate({{0.0, 10, 2}}, limits, window); }, "--num-scheduler-steps: multi-step scheduling with chunked prefill"));
    limits.prefill_first = true;
    limits.multi_steps = 0;
    BOOST_TEST(test::throws_naming([&] { simulate({{0.0, 10, 2}}, limits, window); }, "--num-scheduler-steps"));
    limits.multi_steps = 4;
    limits.speculative_tokens = 1;
    limits.acceptance = {0.5};
    BOOST_TEST(test::throws_naming([&] { simulate({{0.0, 10, 2}}, limits, window); }, "--num-scheduler-steps: vLLM's multi-step scheduling does not run with speculative"));
}

BOOST_AUTO_TEST_CASE(token_gaps_are_kept_in_a_bounded_histogram) {
    // Bin width 10^(1/200): a percentile read at a bin's centre is within 0.6% of the exact one.
    constexpr double kBinTolerance = 0.006;
    GapHistogram h;
    BOOST_TEST(h.quantile(0.5) == 0.0);
    for (int i = 1; i <= 1000; ++i) h.add(i * 1e-3);
    BOOST_TEST(h.total == 1000);
    BOOST_TEST(std::abs(h.mean_s() - 0.5005) < 1e-12);
    for (const auto& [q, exact] : std::vector<std::pair<double, double>>{{0.5, 0.5}, {0.9, 0.9}, {0.99, 0.99}})
        BOOST_TEST(std::abs(h.quantile(q) / exact - 1) < kBinTolerance, q << ": " << h.quantile(q));
    h.add(1e-12);  // below the range: the first bin
    h.add(1e9);    // above: the last
    BOOST_TEST(h.total == 1002);
    // A lone request's gaps are its decode steps; a prefill-only step between two tokens shows as
    // one long gap in the prefill-first scheduler's tail.
    EngineLimits limits;
    limits.max_num_batched_tokens = 512;
    const SimulationResult one = simulate({{0.0, 2000, 101}}, limits, synthetic_cost);
    BOOST_TEST(one.itl.total == 100);
    StepShape mid;
    mid.decode_sequences = 1;
    mid.decode_context_tokens = 2050;
    BOOST_TEST(std::abs(one.itl.quantile(0.5) / synthetic_cost(mid) - 1) < kBinTolerance);
    limits.prefill_first = true;
    const SimulationResult stalled = simulate({{0.0, 200, 400}, {1.0, 4000, 2}}, limits, synthetic_cost);
    StepShape decode;
    decode.decode_sequences = 1;
    decode.decode_context_tokens = 400;
    BOOST_TEST(stalled.itl.quantile(1.0) > 5 * synthetic_cost(decode));  // the first request waited out 8 prefill steps
}

BOOST_AUTO_TEST_CASE(sglang_admission_reserves_room_for_future_tokens) {
    // A KV cache of 8,192 tokens and requests of 200 + 1,000 tokens arriving together: without a
    // reservation the engine admits every prompt that fits now and preempts as the outputs grow;
    // reserving for the outputs admits fewer at once and preempts less.
    EngineLimits limits;
    limits.kv_cache_tokens = 8192;
    limits.prefill_first = true;
    std::vector<Request> r;
    for (int i = 0; i < 40; ++i) r.push_back({0.0, 200, 1000});
    const SimulationResult greedy = simulate(r, limits, synthetic_cost, 50'000'000, 0, 1000);
    limits.reserve_future_tokens = true;
    const SimulationResult reserved = simulate(r, limits, synthetic_cost, 50'000'000, 0, 1000);
    BOOST_TEST(greedy.preemptions > 0);
    BOOST_TEST(reserved.preemptions < greedy.preemptions);
    std::int64_t most_greedy = 0, most_reserved = 0;
    for (const TimelinePoint& p : greedy.timeline) most_greedy = std::max(most_greedy, p.running);
    for (const TimelinePoint& p : reserved.timeline) most_reserved = std::max(most_reserved, p.running);
    BOOST_TEST(most_reserved < most_greedy);
    const LittlesLaw l = littles_law(reserved);
    BOOST_TEST(std::abs(l.mean_in_system - l.throughput_times_latency) <= kLittleTolerance * l.throughput_times_latency);
    for (const RequestResult& q : reserved.requests) BOOST_TEST(q.finish_s > 0);
}

BOOST_AUTO_TEST_CASE(queueing_delay_is_the_wait_before_the_first_step) {
    EngineLimits limits;
    limits.max_num_seqs = 2;
    // Four at once, two slots: the first two start at once, the last two wait for the first to end.
    const std::vector<Request> burst(4, Request{0.0, 100, 50});
    const SimulationResult r = simulate(burst, limits, synthetic_cost);
    BOOST_TEST(r.requests[0].queue_s() == 0.0);
    BOOST_TEST(r.requests[1].queue_s() == 0.0);
    BOOST_TEST(r.requests[2].queue_s() >= r.requests[0].e2e_s() - 1e-12);
    BOOST_TEST(r.requests[2].queue_s() < r.requests[2].ttft_s());
    // The same burst through capacity's summary: the mean wait is the two waits over four.
    Traffic t;
    t.requests = 4;
    t.input = parse_length_spec("100", "--isl");
    t.output = parse_length_spec("50", "--osl");
    t.arrival = parse_arrival("burst", "--arrival");
    EnginePricing p;
    p.cost = synthetic_cost;
    p.limits = limits;
    const ServeStats st = run_traffic(t, p, Slo{}, 0.0);
    BOOST_TEST(std::abs(st.queue_s.mean - (r.requests[2].queue_s() + r.requests[3].queue_s()) / 4.0) < 1e-12);
    BOOST_TEST(st.queue_s.p99 > 0.0);
}

BOOST_AUTO_TEST_SUITE_END()


// The bundled price list (assets/prices/gpu-prices.json): every entry well formed, one default per
// GPU, each with a source; and malformed lists refused naming the field.
BOOST_AUTO_TEST_CASE(the_bundled_gpu_prices_are_well_formed) {
    const std::string path = (test::source_dir() / "assets" / "prices" / "gpu-prices.json").string();
    const std::vector<GpuPrice> all = parse_gpu_prices(read_text_file(path, "gpu-prices.json", 1 << 22), path);
    BOOST_TEST(all.size() >= 20u);
    const std::map<std::string, GpuPrice> defaults = default_gpu_prices(all);
    for (const char* gpu : {"h100-sxm", "h200", "a100-80gb", "l40s", "l4", "rtx-4090"}) {
        BOOST_TEST_REQUIRE(defaults.count(gpu) == 1u, gpu);
        BOOST_TEST(defaults.at(gpu).usd_per_gpu_hour > 0.1);
        BOOST_TEST(defaults.at(gpu).usd_per_gpu_hour < 20.0);
        BOOST_TEST(!defaults.at(gpu).source.empty());
        // Every GPU id names a bundled GPU profile.
        BOOST_TEST(std::filesystem::exists(test::source_dir() / "assets" / "gpus" / (std::string(gpu) + ".json")), gpu);
    }
    for (const auto& [bad, field] : std::vector<std::pair<std::string, std::string>>{
             {"[]", "prices"},
             {R"({"prices": [{"gpu": "h200", "usd_per_gpu_hour": 0, "default": true, "provider": "p", "offering": "o", "source": "s"}]})", "usd_per_gpu_hour"},
             {R"({"prices": [{"gpu": "h200", "usd_per_gpu_hour": 2, "default": true, "provider": "p", "offering": "o"}]})", "source"},
             {R"({"prices": [{"gpu": "h200", "usd_per_gpu_hour": 2, "default": true, "provider": "p", "offering": "o", "source": "s"},
                            {"gpu": "h200", "usd_per_gpu_hour": 3, "default": true, "provider": "p", "offering": "o", "source": "s"}]})", "second default"},
             {R"({"prices": [{"gpu": "h200", "usd_per_gpu_hour": 2, "default": true, "provider": "p", "offering": "o", "source": "s", "date": "May"}]})", "date"},
             {"{", "not valid JSON"}})
        BOOST_TEST(test::throws_naming([&] { parse_gpu_prices(bad, "prices.json"); }, field), bad);
}
