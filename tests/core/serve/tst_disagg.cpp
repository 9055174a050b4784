// Disaggregated prefill and decode: the transfer, Little's law per pool and end to end, the link's
// effect on TTFT, determinism, and bad input.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <limits>

#include "core/serve/disagg.h"
#include "core/serve/disagg_plan.h"
#include "tests/core/test_support.h"

using namespace quantplan;
using namespace quantplan::serve;

namespace {

// A synthetic engine: a step costs 2 ms plus 0.1 ms per prefill token and 0.05 ms per decoding sequence.
EnginePricing toy_pricing() {
    EnginePricing p;
    p.limits.max_num_seqs = 64;
    p.limits.max_num_batched_tokens = 4096;
    p.limits.kv_cache_tokens = 1 << 20;
    p.cost = [](const StepShape& s) {
        return 0.002 + 1e-4 * static_cast<double>(s.prefill_tokens) + 5e-5 * static_cast<double>(s.decode_sequences);
    };
    return p;
}

DisaggSpec toy_spec(double bandwidth, bool layerwise) {
    DisaggSpec s;
    s.prefill = {toy_pricing(), 2, 1, "bf16", "h100-sxm"};
    s.decode = {toy_pricing(), 1, 1, "bf16", "h100-sxm"};
    s.link.id = "test";
    s.link.name = "test link";
    s.link.bandwidth_bytes_per_s = bandwidth;
    s.link.latency_s = 1e-5;
    s.kv_bytes_per_token = 131072;  // Llama 3.1 8B in bf16: 32 layers x 8 KV heads x 128 x 2 x 2 bytes
    s.layers = 32;
    s.layerwise = layerwise;
    return s;
}

Traffic toy_traffic() {
    Traffic t;
    t.rate_per_s = 4;
    t.requests = 300;
    t.input = parse_length_spec("1000", "--isl");
    t.output = parse_length_spec("100", "--osl");
    t.seed = 5;
    return t;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(disagg)

BOOST_AUTO_TEST_CASE(littles_law_holds_per_pool_and_end_to_end_and_the_run_is_deterministic) {
    const DisaggStats a = run_disagg(toy_traffic(), toy_spec(50e9, true), {});
    const DisaggStats b = run_disagg(toy_traffic(), toy_spec(50e9, true), {});
    BOOST_TEST(a.end_to_end.ttft_s.p50 == b.end_to_end.ttft_s.p50);
    BOOST_TEST(a.prefill_mean_in_system == a.prefill_throughput_times_latency, boost::test_tools::tolerance(0.02));
    BOOST_TEST(a.decode_mean_in_system == a.decode_throughput_times_latency, boost::test_tools::tolerance(0.02));
    BOOST_TEST(a.end_mean_in_system == a.end_throughput_times_latency, boost::test_tools::tolerance(0.02));
    BOOST_TEST(a.end_to_end.requests_per_s > 3.0);
    BOOST_TEST(a.prefill_utilization > 0.0);
    BOOST_TEST(a.prefill_utilization < 1.0);
}

BOOST_AUTO_TEST_CASE(a_slow_link_adds_its_transfer_to_ttft_and_layerwise_overlap_hides_it) {
    // 1,000 tokens x 128 KiB = 131 MB: 2.6 ms at 50 GB/s, 105 ms at 1.25 GB/s.
    const DisaggStats fast = run_disagg(toy_traffic(), toy_spec(50e9, false), {});
    const DisaggStats slow = run_disagg(toy_traffic(), toy_spec(1.25e9, false), {});
    BOOST_TEST(fast.transfer_s.p50 == 1000 * 131072 / 50e9 + 1e-5, boost::test_tools::tolerance(0.01));
    BOOST_TEST(slow.transfer_s.p50 >= 1000 * 131072 / 1.25e9);
    BOOST_TEST(slow.end_to_end.ttft_s.p50 - fast.end_to_end.ttft_s.p50 > 0.09);
    // Sent layer by layer while the 0.1 s prefill runs, the slow link's transfer ends soon after it.
    const DisaggStats overlapped = run_disagg(toy_traffic(), toy_spec(1.25e9, true), {});
    BOOST_TEST(overlapped.transfer_s.p50 < slow.transfer_s.p50);
}

// A closed loop: every user has exactly one request in the system until the run's tail, so the
// mean in the system is just under the users, and Little's law holds over the composed run.
BOOST_AUTO_TEST_CASE(a_closed_loop_keeps_each_user_one_request_in_the_system) {
    Traffic closed = toy_traffic();
    closed.rate_per_s.reset();
    closed.concurrency = 8;
    const DisaggStats a = run_disagg(closed, toy_spec(50e9, true), {});
    BOOST_TEST(a.end_mean_in_system <= 8.0 * 1.001);
    BOOST_TEST(a.end_mean_in_system >= 8.0 * 0.85);
    BOOST_TEST(a.end_mean_in_system == a.end_throughput_times_latency, boost::test_tools::tolerance(0.02));
    // Throughput is users over the mean latency (the interactive response-time law, no think time).
    BOOST_TEST(a.end_to_end.requests_per_s == a.end_mean_in_system / a.end_to_end.e2e_s.mean, boost::test_tools::tolerance(0.03));
    // More users, more throughput, until a pool saturates; and deterministic.
    closed.concurrency = 16;
    const DisaggStats b = run_disagg(closed, toy_spec(50e9, true), {});
    BOOST_TEST(b.end_to_end.requests_per_s > a.end_to_end.requests_per_s);
    BOOST_TEST(run_disagg(closed, toy_spec(50e9, true), {}).end_to_end.ttft_s.p90 == b.end_to_end.ttft_s.p90);
}

// A decode instance given a burst of requests whose KV arrived computed admits them in one step
// and decodes them from the next (the step that only admits them prices nothing).
BOOST_AUTO_TEST_CASE(a_burst_of_transferred_requests_decodes_from_the_next_step) {
    std::vector<Request> burst(20);
    for (Request& r : burst) r.input_tokens = 1000, r.output_tokens = 10, r.kv_ready = true;
    const SimulationResult sim = simulate(burst, toy_pricing().limits, toy_pricing().cost);
    // Ten decode steps of 20 sequences: 2 ms + 20 x 0.05 ms each, no prefill.
    BOOST_TEST(sim.end_s == 10 * (0.002 + 20 * 5e-5), boost::test_tools::tolerance(1e-9));
    BOOST_TEST(sim.requests.front().first_token_s == 0.002 + 20 * 5e-5, boost::test_tools::tolerance(1e-9));
}

// A finished request whose KV is held (a prefill instance until its link has sent it) keeps its
// blocks: in a cache with room for one prompt, the next prompt completes only after the hold ends.
BOOST_AUTO_TEST_CASE(held_kv_blocks_delay_the_next_admission) {
    EngineLimits limits = toy_pricing().limits;
    limits.kv_cache_tokens = 1024;  // one 1,000-token prompt (63 blocks of 16)
    std::vector<Request> two(2);
    for (Request& r : two) r.input_tokens = 1000, r.output_tokens = 1;
    const SimulationResult free = simulate(two, limits, toy_pricing().cost);
    two[0].hold_kv_s = 0.5;
    const SimulationResult held = simulate(two, limits, toy_pricing().cost);
    // The second prompt's last chunk needs the first one's blocks: it completes only after they free.
    BOOST_TEST(held.requests[1].first_token_s > held.requests[0].finish_s + 0.5);
    BOOST_TEST(free.requests[1].first_token_s < free.requests[0].finish_s + 0.5);
    BOOST_TEST(held.requests[0].finish_s == free.requests[0].finish_s);
}

// In disaggregated serving the prefill instance holds each prompt's KV until its link has sent it:
// with a cache for one prompt and a slow link, each prefill waits for the last transfer, which a
// large cache does not.
BOOST_AUTO_TEST_CASE(a_prefill_instance_holds_the_kv_until_it_is_sent) {
    DisaggSpec small = toy_spec(1.25e9, false), large = toy_spec(1.25e9, false);
    small.prefill.pricing.limits.kv_cache_tokens = 1024;
    small.prefill.instances = large.prefill.instances = 1;
    Traffic t = toy_traffic();
    t.rate_per_s = 8;  // a prefill (0.1 s) and a transfer (0.105 s) every 0.125 s on average
    const DisaggStats a = run_disagg(t, small, {}), b = run_disagg(t, large, {});
    BOOST_TEST(a.end_to_end.ttft_s.p50 > b.end_to_end.ttft_s.p50 + 0.05, a.end_to_end.ttft_s.p50 << " vs " << b.end_to_end.ttft_s.p50);
    BOOST_TEST(a.end_mean_in_system == a.end_throughput_times_latency, boost::test_tools::tolerance(0.02));
}

// Aggregated replicas share the traffic: a rate split evenly, a closed loop's users and requests,
// and a trace without a rate at its own rate over the replicas (each replica takes the whole trace,
// its times stretched R-fold).
BOOST_AUTO_TEST_CASE(replicas_share_a_rate_a_closed_loop_and_a_trace) {
    Traffic t = toy_traffic();
    BOOST_TEST(*replica_share(t, 4).rate_per_s == 1.0);
    Traffic closed = t;
    closed.rate_per_s.reset();
    closed.concurrency = 10;
    BOOST_TEST(*replica_share(closed, 4).concurrency == 3);  // rounded up
    BOOST_TEST(replica_share(closed, 4).requests == 75);
    Traffic trace = t;
    trace.rate_per_s.reset();
    trace.trace = parse_trace("timestamp_s,input_tokens,output_tokens\n0,100,10\n1,100,10\n2,100,10\n", "t.csv", "--trace");
    const Traffic share = replica_share(trace, 2);
    BOOST_TEST_REQUIRE(share.rate_per_s.has_value());
    BOOST_TEST(*share.rate_per_s == trace_rate(trace.trace) / 2, boost::test_tools::tolerance(1e-12));
    BOOST_TEST(make_requests(share, *share.rate_per_s).back().arrival_s == 4.0, boost::test_tools::tolerance(1e-12));
}

// What a prompt moves is what the decode ranks hold, every rank its own heads. Mooncake's two
// PD pages (kvcache-ai/Mooncake docs/source/performance/, commit 59a76230, in
// assets/measurements/disaggregated/) print each transfer's size: SGLang, Qwen3-235B-A22B at TP 8
// (4 KV heads, so each head on two ranks): 49 MB for 128 tokens, 12.62 GB for 32,768 (decimal), twice
// the model's own 192,512 bytes a token; vLLM, Qwen3-8B at TP 8 (8 KV heads, one a rank): 4.50 GB
// for 32,768 tokens, the model's 147,456 bytes a token (its table's GB are GiB: 4.83e9 bytes).
BOOST_AUTO_TEST_CASE(replicated_kv_heads_move_once_per_decode_rank) {
    const ModelConfig big = test::bundled_model("qwen3-235b-a22b");
    const GpuProfile gpu = test::bundled_gpu("h100-sxm");
    const SchemeCosts b = scheme_costs(big, tensor_inventory(big), parse_scheme("bf16"), parse_kv_format("bf16"), gpu);
    BOOST_TEST(b.kv_bytes_per_token == 192512u);
    BOOST_TEST(kv_transfer_bytes_per_token(b, 8) == 2.0 * 192512);
    BOOST_TEST(kv_transfer_bytes_per_token(b, 4) == 192512.0);
    BOOST_TEST(std::round(128 * kv_transfer_bytes_per_token(b, 8) / 1e6) == 49.0);
    BOOST_TEST(std::round(32768 * kv_transfer_bytes_per_token(b, 8) / 1e7) / 100 == 12.62);
    const ModelConfig small = test::bundled_model("qwen3-8b");
    const SchemeCosts q = scheme_costs(small, tensor_inventory(small), parse_scheme("bf16"), parse_kv_format("bf16"), gpu);
    BOOST_TEST(kv_transfer_bytes_per_token(q, 8) == 147456.0);
    BOOST_TEST(std::round(32768 * kv_transfer_bytes_per_token(q, 8) / 1073741824.0 * 100) / 100 == 4.5);
}

// A connector's transfer terms: the fit recovers the cost a transfer and the share of the line rate
// that made its points, holds each at its bound when the free fit leaves it, and needs two sizes.
BOOST_AUTO_TEST_CASE(transfer_terms_are_fitted_within_their_bounds) {
    const TransferTerms made{0.4e-3, 0.75, 0, ""};
    std::vector<TransferPoint> points;
    for (const double mb : {2.0, 8.0, 32.0, 128.0, 512.0}) {
        TransferPoint p{mb * 1e6, 25e9, 8e-7, 0};
        p.measured_s = transfer_time_s(made, p.bytes_per_link, p.bandwidth_bytes_per_s, p.latency_s);
        points.push_back(p);
    }
    const TransferTerms t = fit_transfer_terms(points);
    constexpr double kSolved = 1e-6;  // exact points: the normal equations' rounding only
    BOOST_TEST(t.points == 5);
    BOOST_TEST(t.per_transfer_s == 0.4e-3, boost::test_tools::tolerance(kSolved));
    BOOST_TEST(t.line_rate_fraction == 0.75, boost::test_tools::tolerance(kSolved));
    // Where the free fit leaves the box (a negative cost, a share above the line rate, or both in
    // turn), the answer is the box's constrained minimum of the relative squared error: checked
    // against a brute-force search over a fine grid of the box.
    const auto loss = [](const std::vector<TransferPoint>& pts, double c, double fraction) {
        double sum = 0;
        for (const TransferPoint& p : pts) {
            const double r = transfer_time_s({c, fraction, 0, ""}, p.bytes_per_link, p.bandwidth_bytes_per_s, p.latency_s) / p.measured_s - 1;
            sum += r * r;
        }
        return sum;
    };
    const auto brute = [&](const std::vector<TransferPoint>& pts) {
        double best = std::numeric_limits<double>::infinity();
        for (int i = 0; i <= 400; ++i)        // cost a transfer: 0 to 4 ms
            for (int j = 1; j <= 400; ++j)    // share of the line rate: 0.0025 to 1
                best = std::min(best, loss(pts, i * 1e-5, j / 400.0));
        return best;
    };
    // The grid's spacing (10 us, 0.25%) bounds how far above the true minimum its best may lie.
    constexpr double kGridSlack = 1e-3;
    std::vector<TransferPoint> fast = points;   // faster than the line rate: the share held at 1
    for (TransferPoint& p : fast) p.measured_s = 0.2e-3 + p.bytes_per_link / (1.2 * p.bandwidth_bytes_per_s);
    std::vector<TransferPoint> odd = points;    // small transfers cheaper per byte: the cost held at 0
    for (std::size_t i = 0; i < odd.size(); ++i) odd[i].measured_s = odd[i].bytes_per_link / ((i == 0 ? 0.9 : 0.5) * 25e9);
    std::vector<TransferPoint> corner = odd;    // a negative cost whose refit then goes above the line rate: both at their bounds
    for (std::size_t i = 0; i < corner.size(); ++i) corner[i].measured_s = corner[i].bytes_per_link / ((i == 0 ? 2.0 : 1.2) * 25e9);
    for (const std::vector<TransferPoint>* pts : {&fast, &odd, &corner}) {
        const TransferTerms t = fit_transfer_terms(*pts);
        BOOST_TEST(t.points == 5);
        BOOST_TEST(t.per_transfer_s >= 0.0);
        BOOST_TEST(t.line_rate_fraction <= 1.0);
        BOOST_TEST(loss(*pts, t.per_transfer_s, t.line_rate_fraction) <= brute(*pts) + kGridSlack,
                   "fit " << t.per_transfer_s << " s, " << t.line_rate_fraction << " of the line rate");
    }
    BOOST_TEST(fit_transfer_terms(fast).line_rate_fraction == 1.0);
    BOOST_TEST(fit_transfer_terms(odd).per_transfer_s == 0.0);
    BOOST_TEST(fit_transfer_terms(odd).line_rate_fraction < 1.0);
    BOOST_TEST(fit_transfer_terms(corner).per_transfer_s == 0.0);
    BOOST_TEST(fit_transfer_terms(corner).line_rate_fraction == 1.0);
    // One size only: nothing to fit, the line rate stands.
    const TransferTerms one = fit_transfer_terms({points[2], points[2]});
    BOOST_TEST(one.points == 0);
    BOOST_TEST(one.line_rate_fraction == 1.0);
    BOOST_TEST(one.per_transfer_s == 0.0);
}

// The terms slow every send: a cost a transfer and a share of the line rate lengthen the transfer
// (and so TTFT) by what they add to one request's send when the link is never busy.
BOOST_AUTO_TEST_CASE(a_connectors_transfer_terms_lengthen_each_send) {
    DisaggSpec line = toy_spec(50e9, false), fitted = line;
    fitted.transfer = {2e-3, 0.5, 9, "test"};
    const DisaggStats a = run_disagg(toy_traffic(), line, {});
    const DisaggStats b = run_disagg(toy_traffic(), fitted, {});
    const double send = 1000 * 131072 / 50e9;
    constexpr double kIdleLink = 0.01;  // 2 requests/s a prefill instance against 7 ms sends: the link is free for almost every one
    BOOST_TEST(a.transfer_s.p50 == send + 1e-5, boost::test_tools::tolerance(kIdleLink));
    BOOST_TEST(b.transfer_s.p50 == 2e-3 + send / 0.5 + 1e-5, boost::test_tools::tolerance(kIdleLink));
    BOOST_TEST(b.end_to_end.ttft_s.p50 > a.end_to_end.ttft_s.p50);
}

// The bundled fit names each connector it has terms for; a connector without published transfer
// times keeps the line rate and says so; the file round-trips; a malformed one is one error naming
// the field.
BOOST_AUTO_TEST_CASE(the_bundled_transfer_fit_applies_to_its_connectors_only) {
    const auto fit = load_transfer_fit(test::source_dir() / "assets" / "engines" / "fit" / "kv-transfer-fit.json");
    BOOST_TEST_REQUIRE(fit.count("mooncake") == 1u);
    BOOST_TEST_REQUIRE(fit.count("sglang") == 1u);
    KvConnector m = resolve_connector("mooncake", "vllm");
    BOOST_TEST(m.decode_frontend);
    BOOST_TEST(!m.layerwise);
    apply_transfer_fit(m, fit);
    BOOST_TEST(m.transfer.points == 9);
    BOOST_TEST(m.transfer.line_rate_fraction < 1.0);
    BOOST_TEST(m.transfer.per_transfer_s > 0.0);
    BOOST_TEST(m.transfer.basis.find("kvcache-ai/Mooncake") != std::string::npos, m.transfer.basis);
    KvConnector n = resolve_connector("", "vllm");
    BOOST_TEST(n.id == "nixl");
    apply_transfer_fit(n, fit);
    BOOST_TEST(n.transfer.points == 0);
    BOOST_TEST(n.transfer.line_rate_fraction == 1.0);
    BOOST_TEST(n.transfer.basis.find("no published transfer times") != std::string::npos);
    const auto again = parse_transfer_fit(transfer_fit_json(fit, "fnv1a64:0").dump(), "again");
    BOOST_TEST(again.at("sglang").per_transfer_s == fit.at("sglang").per_transfer_s);
    BOOST_TEST(again.at("sglang").line_rate_fraction == fit.at("sglang").line_rate_fraction);
    BOOST_TEST(test::throws_naming([] { parse_transfer_fit(R"({"format": "quantplan-kv-transfer-fit/1", "connectors": {"x": {"per_transfer_s": 0, "line_rate_fraction": 0, "points": 2}}})", "f.json"); },
                                   "f.json: connectors.x.line_rate_fraction"));
    BOOST_TEST(test::throws_naming([] { parse_transfer_fit(R"({"format": "other"})", "f.json"); }, "f.json: format"));
    BOOST_TEST(test::throws_naming([] { parse_transfer_fit(R"({"format": 3})", "f.json"); }, "f.json: format"));
    BOOST_TEST(test::throws_naming([] { parse_transfer_fit(R"({"format": "quantplan-kv-transfer-fit/1", "connectors": {"x": {"per_transfer_s": 0, "line_rate_fraction": 1, "points": 2.7, "basis": "b"}}})", "f.json"); },
                                   "f.json: connectors.x.points"));
    BOOST_TEST(test::throws_naming([] { parse_transfer_fit(R"({"format": "quantplan-kv-transfer-fit/1", "connectors": {"x": {"per_transfer_s": 0, "line_rate_fraction": 1, "points": 2}}})", "f.json"); },
                                   "f.json: connectors.x.basis"));
    BOOST_TEST(load_transfer_fit(test::source_dir() / "no-such-file.json").empty());
}

BOOST_AUTO_TEST_CASE(bad_input_names_the_option) {
    BOOST_TEST(test::throws_naming([] { parse_disagg("0:2"); }, "--disagg: P and D must each be at least 1"));
    BOOST_TEST(test::throws_naming([] { parse_disagg("2"); }, "--disagg: '2' is not P:D"));
    // A closed loop of more requests per user than the fixed point's passes are bounded for.
    Traffic long_loop = toy_traffic();
    long_loop.rate_per_s.reset();
    long_loop.concurrency = 1;
    long_loop.requests = kMaxClosedLoopRequestsPerUser + 1;
    BOOST_TEST(test::throws_naming([&] { run_disagg(long_loop, toy_spec(50e9, true), {}); }, "--requests: a closed loop through the two pools"));
    // A malformed field of an interconnect profile is one error naming the file, not a crash.
    BOOST_TEST(test::throws_naming([] { parse_interconnect(R"({"format": "quantplan-interconnect/1", "id": 7, "bandwidth_bytes_per_s_per_direction": 1e9})", "x.json"); },
                                   "x.json"));
    BOOST_TEST(test::throws_naming([] { parse_interconnect(R"({"format": "quantplan-interconnect/1", "id": "x"})", "x.json"); },
                                   "bandwidth_bytes_per_s_per_direction"));
    // Every bundled interconnect profile parses.
    for (const char* id : {"nvlink4", "infiniband-ndr", "roce-400g", "pcie-gen5-x16"}) {
        const Interconnect c = resolve_interconnect(id, test::source_dir() / "assets" / "interconnects");
        BOOST_TEST(c.bandwidth_bytes_per_s > 1e9);
    }
}

BOOST_AUTO_TEST_SUITE_END()
