// The continuous-batching simulator (core/serve/simulator.h): Little's law in every run, a lone
// request's TPOT and TTFT equal to the steps that serve it, determinism for a seed, saturation at
// what the engine admits, preemption when the KV cache runs out, and bad input as one error.
#include <boost/test/unit_test.hpp>

#include <cmath>

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

// Little's law within 2%, the tolerance.
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

BOOST_AUTO_TEST_SUITE_END()
