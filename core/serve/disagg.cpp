#include "core/serve/disagg.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <numeric>

#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/base/json_guard.h"
#include "core/base/text_file.h"

namespace quantplan::serve {
namespace {

double d(std::int64_t v) { return static_cast<double>(v); }

}  // namespace

Interconnect parse_interconnect(std::string_view text, const std::string& source) {
    const nlohmann::json j = parse_untrusted_json(text, source);
    if (!j.is_object()) throw Error(source, "an interconnect profile is a JSON object");
    if (j.value("format", std::string()) != "quantplan-interconnect/1") throw Error(source + ": format", "expected \"quantplan-interconnect/1\"");
    // A text field, or `fallback` when absent; another type is an error naming the field.
    const auto text_field = [&](const nlohmann::json& o, const char* key, const std::string& fallback) {
        const auto it = o.find(key);
        if (it == o.end() || it->is_null()) return fallback;
        if (!it->is_string()) throw Error(source + ": " + key, "must be text");
        return it->get<std::string>();
    };
    Interconnect c;
    c.id = text_field(j, "id", "");
    c.name = text_field(j, "name", c.id);
    c.scope = text_field(j, "scope", "");
    if (c.id.empty()) throw Error(source + ": id", "missing");
    const auto bw = j.find("bandwidth_bytes_per_s_per_direction");
    if (bw == j.end() || !bw->is_number() || !(bw->get<double>() > 0) || !std::isfinite(bw->get<double>()))
        throw Error(source + ": bandwidth_bytes_per_s_per_direction", "an interconnect needs a positive bandwidth (bytes/s per GPU, one direction)");
    c.bandwidth_bytes_per_s = bw->get<double>();
    const auto lat = j.find("latency_s");
    if (lat != j.end() && !lat->is_null()) {
        if (!lat->is_number() || !(lat->get<double>() >= 0) || lat->get<double>() > 1.0) throw Error(source + ": latency_s", "must be seconds from 0 to 1");
        c.latency_s = lat->get<double>();
    }
    if (j.contains("sources") && j["sources"].is_array() && !j["sources"].empty() && j["sources"][0].is_object()) {
        const nlohmann::json& s = j["sources"][0];
        c.source = text_field(s, "url", text_field(s, "repository", ""));
    }
    return c;
}

Interconnect resolve_interconnect(std::string_view argument, const std::filesystem::path& dir) {
    const std::string arg(argument);
    if (arg.empty()) throw Error("--interconnect", "needs an interconnect id or a profile file");
    std::error_code ec;
    std::filesystem::path file = dir / (arg + ".json");
    if (arg.find('/') != std::string::npos || (arg.size() > 5 && arg.substr(arg.size() - 5) == ".json")) file = arg;
    if (!std::filesystem::is_regular_file(file, ec)) {
        std::string known;
        for (const auto& e : std::filesystem::directory_iterator(dir, ec))
            if (e.path().extension() == ".json") known += (known.empty() ? "" : ", ") + e.path().stem().string();
        throw Error("--interconnect", "'" + clip_text(arg, 80) + "' is not a bundled interconnect (" + known + ") or a profile file");
    }
    try {
        return parse_interconnect(read_text_file(file, "--interconnect", 1 << 20), file.filename().string());
    } catch (const Error& e) {
        throw Error("--interconnect", e.what());
    }
}

std::vector<Interconnect> load_interconnects(const std::filesystem::path& dir) {
    std::vector<Interconnect> out;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
        if (e.path().extension() != ".json") continue;
        try {
            out.push_back(parse_interconnect(read_text_file(e.path(), "interconnect", 1 << 20), e.path().filename().string()));
        } catch (const Error&) {
        }
    }
    std::sort(out.begin(), out.end(), [](const Interconnect& a, const Interconnect& b) { return a.id < b.id; });
    return out;
}

double kv_transfer_bytes_per_token(const SchemeCosts& costs, std::int64_t decode_tp) {
    const std::int64_t ranks = std::max<std::int64_t>(decode_tp, 1);
    return static_cast<double>(kv_bytes_per_token_per_gpu(costs, ranks)) * static_cast<double>(ranks);
}

KvConnector resolve_connector(std::string_view id, std::string_view engine) {
    const std::string name = !id.empty() ? std::string(id) : engine.find("sglang") != std::string_view::npos ? "sglang" : "nixl";
    if (name == "nixl")
        return {name, false, true,
                "vLLM NixlConnector: the decode server pulls the whole KV after the prefill returns; the request passes the decode server's frontend too "
                "(vllm/distributed/kv_transfer/kv_connector/v1/nixl_connector.py)", {}};
    if (name == "p2p-nccl")
        return {name, true, true, "vLLM P2pNcclConnector: each layer's KV sent as the prefill computes it (save_kv_layer)", {}};
    if (name == "dynamo")
        return {name, false, false, "NVIDIA Dynamo (vLLM workers): one frontend; the prefill worker writes the whole KV over NIXL after its prefill", {}};
    if (name == "mooncake")
        return {name, false, true,
                "vLLM MooncakeConnector: the prefill server keeps the blocks, the decode server asks for them and Mooncake's transfer engine writes "
                "the whole KV after the prefill; the request passes the decode server's frontend too "
                "(vllm/distributed/kv_transfer/kv_connector/v1/mooncake_connector.py)", {}};
    if (name == "sglang")
        return {name, false, false,
                "SGLang PD (Mooncake or NIXL backend): the router sends the request to both servers at once; the KV is sent after the prefill "
                "(python/sglang/srt/disaggregation/prefill.py)", {}};
    throw Error("--kv-connector", "'" + clip_text(name, 40) + "' is not a connector quantplan models (nixl, p2p-nccl, dynamo, mooncake, sglang)");
}

TransferTerms fit_transfer_terms(const std::vector<TransferPoint>& points) {
    TransferTerms t;
    t.basis = "too few transfer times of different sizes to fit";
    // Relative residual of point i: c a_i + s b_i - r_i, with a = 1 / y, b = (bytes / bandwidth) / y
    // (the send at the line rate, over the measured time), r = 1 - latency / y, and s = 1 / fraction.
    double aa = 0, ab = 0, bb = 0, ar = 0, br = 0;
    double smallest = std::numeric_limits<double>::infinity(), largest = 0;  // the line-rate send times, the regressor
    std::int64_t n = 0;
    for (const TransferPoint& p : points) {
        if (!(p.measured_s > 0) || !(p.bandwidth_bytes_per_s > 0) || !(p.bytes_per_link > 0) || !std::isfinite(p.measured_s)) continue;
        const double a = 1.0 / p.measured_s, b = p.bytes_per_link / p.bandwidth_bytes_per_s / p.measured_s, r = 1.0 - p.latency_s / p.measured_s;
        aa += a * a, ab += a * b, bb += b * b, ar += a * r, br += b * r;
        smallest = std::min(smallest, p.bytes_per_link / p.bandwidth_bytes_per_s);
        largest = std::max(largest, p.bytes_per_link / p.bandwidth_bytes_per_s);
        ++n;
    }
    const double det = aa * bb - ab * ab;
    if (n < 2 || !(largest > smallest * 1.01) || !(det > 1e-12 * aa * bb)) return t;
    double c = (ar * bb - br * ab) / det, slope = (br * aa - ar * ab) / det;
    if (c < 0) c = 0, slope = br / bb;                       // no negative cost per transfer
    if (slope < 1) slope = 1, c = std::max(0.0, (ar - ab) / aa);  // never above the line rate
    t.per_transfer_s = c;
    t.line_rate_fraction = 1.0 / slope;
    t.points = n;
    t.basis = "fitted to " + std::to_string(n) + " published transfer times";
    return t;
}

double transfer_time_s(const TransferTerms& terms, double bytes_per_link, double bandwidth_bytes_per_s, double latency_s) {
    return terms.per_transfer_s + bytes_per_link / (bandwidth_bytes_per_s * terms.line_rate_fraction) + latency_s;
}

std::map<std::string, TransferTerms> parse_transfer_fit(std::string_view text, const std::string& source) {
    const nlohmann::json j = parse_untrusted_json(text, source);
    if (!j.is_object()) throw Error(source, "a KV-transfer fit is a JSON object");
    if (const auto f = j.find("format"); f == j.end() || !f->is_string() || f->get<std::string>() != "quantplan-kv-transfer-fit/1")
        throw Error(source + ": format", "expected \"quantplan-kv-transfer-fit/1\"");
    if (const auto c = j.find("corpus_checksum"); c != j.end() && !c->is_string()) throw Error(source + ": corpus_checksum", "must be text");
    const auto cs = j.find("connectors");
    if (cs == j.end() || !cs->is_object()) throw Error(source + ": connectors", "must be an object of connector ids");
    if (cs->size() > 64) throw Error(source + ": connectors", "at most 64 connectors");
    std::map<std::string, TransferTerms> out;
    for (auto it = cs->begin(); it != cs->end(); ++it) {
        const std::string at = source + ": connectors." + clip_text(it.key(), 40);
        if (!it->is_object()) throw Error(at, "must be an object");
        TransferTerms t;
        const auto number = [&](const char* key, double lo, double hi, bool lo_open) {
            const auto v = it->find(key);
            if (v == it->end() || !v->is_number()) throw Error(at + "." + key, "must be a number");
            const double x = v->get<double>();
            if (!std::isfinite(x) || (lo_open ? !(x > lo) : !(x >= lo)) || x > hi) throw Error(at + "." + key, "out of its range");
            return x;
        };
        t.per_transfer_s = number("per_transfer_s", 0, 1, false);
        t.line_rate_fraction = number("line_rate_fraction", 0, 1, true);
        const auto pts = it->find("points");
        if (pts == it->end() || !pts->is_number_integer() || pts->get<std::int64_t>() < 0 || pts->get<std::int64_t>() > 1000000)
            throw Error(at + ".points", "must be a whole number of transfer times, 0 to 1,000,000");
        t.points = pts->get<std::int64_t>();
        const auto b = it->find("basis");
        if (b == it->end() || !b->is_string() || b->get<std::string>().empty()) throw Error(at + ".basis", "must say what the terms were fitted to");
        t.basis = b->get<std::string>();
        out[it.key()] = t;
    }
    return out;
}

nlohmann::json transfer_fit_json(const std::map<std::string, TransferTerms>& fit, const std::string& corpus_checksum) {
    nlohmann::json cs = nlohmann::json::object();
    for (const auto& [id, t] : fit)
        cs[id] = {{"per_transfer_s", t.per_transfer_s}, {"line_rate_fraction", t.line_rate_fraction}, {"points", t.points}, {"basis", t.basis}};
    return {{"format", "quantplan-kv-transfer-fit/1"}, {"corpus_checksum", corpus_checksum}, {"connectors", cs}};
}

void apply_transfer_fit(KvConnector& connector, const std::map<std::string, TransferTerms>& fit) {
    if (const auto it = fit.find(connector.id); it != fit.end() && it->second.points > 0) {
        connector.transfer = it->second;
        return;
    }
    connector.transfer = TransferTerms{};
    connector.transfer.basis = "no published transfer times of this connector";
}

std::map<std::string, TransferTerms> load_transfer_fit(const std::filesystem::path& file) {
    std::error_code ec;
    if (file.empty() || !std::filesystem::is_regular_file(file, ec)) return {};
    return parse_transfer_fit(read_text_file(file, "kv-transfer fit", 1 << 20), file.filename().string());
}

std::int64_t effective_links(const DisaggSpec& spec) {
    return spec.links > 0 ? spec.links : std::max<std::int64_t>(1, std::min(spec.prefill.tp, spec.decode.tp));
}

std::pair<std::int64_t, std::int64_t> parse_disagg(std::string_view text) {
    const std::size_t colon = text.find(':');
    std::int64_t p = 0, dd = 0;
    const auto num = [](std::string_view s, std::int64_t& out) {
        const auto r = std::from_chars(s.data(), s.data() + s.size(), out);
        return !s.empty() && r.ec == std::errc() && r.ptr == s.data() + s.size();
    };
    if (colon == std::string_view::npos || !num(text.substr(0, colon), p) || !num(text.substr(colon + 1), dd))
        throw Error("--disagg", "'" + clip_text(text, 40) + "' is not P:D (prefill and decode instances)");
    if (p < 1 || dd < 1) throw Error("--disagg", "P and D must each be at least 1 instance");
    if (p > 64 || dd > 64) throw Error("--disagg", "at most 64 instances per pool");
    return {p, dd};
}

namespace {

// One pass of the two pools and the links over `requests` at their arrival times (the client's
// send times); `finish` gets each request's end. `summary_requests` is what the end-to-end figures
// are summarised against (the closed loop's: every request at time 0, as run_traffic does).
DisaggStats compose(const std::vector<Request>& requests, const std::vector<Request>& summary_requests, const DisaggSpec& spec, const Slo& slo,
                    std::vector<double>& finish) {
    const std::size_t n = requests.size();
    DisaggStats out;
    finish.assign(n, 0.0);
    if (n == 0) return out;
    const std::size_t pools_p = static_cast<std::size_t>(spec.prefill.instances), pools_d = static_cast<std::size_t>(spec.decode.instances);

    // 1. Prefill: each instance computes its prompts and samples nothing the client waits for here.
    // 2. Transfers, per prefill instance in the order its prefills end: one at a time on its links.
    // The prefill instance keeps each prompt's KV blocks until its link has sent them
    // (Request::hold_kv_s), which can delay its later admissions when its cache is full; those
    // holds come out of the transfers, so the two are iterated until the holds no longer move
    // (a second pass confirms the first when the cache never fills).
    std::vector<double> prefill_end(n, 0), prefill_start(n, 0);
    std::vector<std::vector<std::size_t>> on_prefill(pools_p);
    for (std::size_t i = 0; i < n; ++i) on_prefill[i % pools_p].push_back(i);
    double prefill_busy = 0, prefill_in_system = 0, prefill_tl = 0;
    double first_arrival = requests.front().arrival_s;
    for (const Request& r : requests) first_arrival = std::min(first_arrival, r.arrival_s);
    const double links = d(effective_links(spec));
    const double bandwidth = spec.link.bandwidth_bytes_per_s * links;
    const double layers = d(std::max<std::int64_t>(spec.layers, 1));
    std::vector<double> ready(n, 0), transfer(n, 0), wait(n, 0), hold(n, 0);
    double link_busy = 0;
    constexpr int kMaxHoldPasses = 8;
    for (int pass = 0; pass < kMaxHoldPasses; ++pass) {
        if (spec.poll) spec.poll();
        out.hold_passes = pass + 1;
        prefill_busy = prefill_in_system = prefill_tl = 0;
        for (std::size_t p = 0; p < pools_p; ++p) {
            if (on_prefill[p].empty()) continue;
            std::vector<Request> list;
            for (const std::size_t i : on_prefill[p]) {
                Request q = requests[i];
                q.output_tokens = 1;
                q.hold_kv_s = hold[i];
                list.push_back(q);
            }
            const SimulationResult sim = simulate(list, spec.prefill.pricing.limits, spec.prefill.pricing.cost);
            for (std::size_t k = 0; k < list.size(); ++k) {
                prefill_end[on_prefill[p][k]] = sim.requests[k].first_token_s;
                prefill_start[on_prefill[p][k]] = sim.requests[k].admitted_s >= 0 ? sim.requests[k].admitted_s : sim.requests[k].first_token_s;
            }
            prefill_busy += sim.busy_s;
            const LittlesLaw ll = littles_law(sim);
            const double span = std::max(1e-9, sim.end_s - list.front().arrival_s);
            prefill_in_system += ll.mean_in_system * span;
            prefill_tl += ll.throughput_times_latency * span;
        }
        link_busy = 0;
        double moved = 0;
        for (std::size_t p = 0; p < pools_p; ++p) {
            std::vector<std::size_t> order = on_prefill[p];
            std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return prefill_end[a] < prefill_end[b]; });
            double link_free = -std::numeric_limits<double>::infinity();
            for (const std::size_t i : order) {
                // The connector's cost a transfer, then the bytes at its share of the line rate.
                const double bytes_s = d(requests[i].input_tokens) * spec.kv_bytes_per_token / (bandwidth * spec.transfer.line_rate_fraction);
                const double send = spec.transfer.per_transfer_s + bytes_s;
                double start = 0, end = 0;
                if (spec.layerwise) {
                    // Layer by layer while the prefill runs: the last layer's share after it, or the
                    // whole send after the link frees.
                    start = std::max(prefill_start[i], link_free);
                    end = std::max(prefill_end[i] + spec.transfer.per_transfer_s + bytes_s / layers, start + send) + spec.link.latency_s;
                    wait[i] = std::max(0.0, link_free - prefill_start[i]);
                } else {
                    start = std::max(prefill_end[i], link_free);
                    end = start + send + spec.link.latency_s;
                    wait[i] = start - prefill_end[i];
                }
                link_free = end - spec.link.latency_s;
                link_busy += send;
                ready[i] = end;
                transfer[i] = end - prefill_end[i];
                const double held = std::max(0.0, link_free - prefill_end[i]);  // until the link has sent it
                moved = std::max(moved, std::abs(held - hold[i]));
                hold[i] = held;
            }
        }
        out.hold_residual_s = moved;
        if (moved <= 1e-9) {
            out.hold_residual_s = 0;
            break;
        }
    }

    // 3. Decode: admitted once the KV has arrived; the first decode step samples the first token.
    std::vector<std::size_t> by_ready(n);
    std::iota(by_ready.begin(), by_ready.end(), std::size_t{0});
    std::stable_sort(by_ready.begin(), by_ready.end(), [&](std::size_t a, std::size_t b) { return ready[a] < ready[b]; });
    std::vector<std::vector<std::size_t>> on_decode(pools_d);
    for (std::size_t k = 0; k < n; ++k) on_decode[k % pools_d].push_back(by_ready[k]);
    EngineLimits decode_limits = spec.decode.pricing.limits;
    if (!spec.decode_frontend) {
        decode_limits.frontend_latency_s = 0;  // the request passed the frontend on its way to the prefill
        decode_limits.frontend_serial_s = 0;
    }
    SimulationResult all;
    all.requests.resize(n);
    double decode_busy = 0, decode_in_system = 0, decode_tl = 0;
    for (std::size_t dd = 0; dd < pools_d; ++dd) {
        if (on_decode[dd].empty()) continue;
        std::vector<Request> list;
        for (const std::size_t i : on_decode[dd]) {
            Request q = requests[i];
            q.arrival_s = ready[i];
            q.kv_ready = true;
            q.shared_prefix_tokens = 0;
            list.push_back(q);
        }
        const SimulationResult sim = simulate(list, decode_limits, spec.decode.pricing.cost);
        for (std::size_t k = 0; k < list.size(); ++k) {
            const std::size_t i = on_decode[dd][k];
            RequestResult& r = all.requests[i];
            r.arrival_s = requests[i].arrival_s;
            r.admitted_s = prefill_start[i];
            r.first_token_s = sim.requests[k].first_token_s;
            r.finish_s = sim.requests[k].finish_s;
            r.output_tokens = sim.requests[k].output_tokens;
            r.preemptions = sim.requests[k].preemptions;
        }
        for (std::size_t b = 0; b < sim.itl.counts.size(); ++b) all.itl.counts[b] += sim.itl.counts[b];
        all.itl.total += sim.itl.total;
        all.itl.sum_s += sim.itl.sum_s;
        all.preemptions += sim.preemptions;
        all.steps += sim.steps;
        decode_busy += sim.busy_s;
        out.decode_kv_utilization += sim.mean_kv_utilization / d(spec.decode.instances);
        const LittlesLaw ll = littles_law(sim);
        const double span = std::max(1e-9, sim.end_s - list.front().arrival_s);
        decode_in_system += ll.mean_in_system * span;
        decode_tl += ll.throughput_times_latency * span;
    }
    for (std::size_t i = 0; i < n; ++i) {
        all.end_s = std::max(all.end_s, all.requests[i].finish_s);
        finish[i] = all.requests[i].finish_s;
    }
    all.busy_s = prefill_busy + decode_busy;
    all.prefill_s = prefill_busy;
    out.end_to_end = summarize(all, summary_requests, slo);
    const double span = std::max(1e-9, all.end_s - first_arrival);
    out.prefill_utilization = prefill_busy / (d(spec.prefill.instances) * span);
    out.decode_utilization = decode_busy / (d(spec.decode.instances) * span);
    out.link_utilization = link_busy / (d(spec.prefill.instances) * span);
    out.transfer_s = percentiles(transfer);
    out.transfer_wait_s = percentiles(wait);
    out.prefill_mean_in_system = prefill_in_system / span;
    out.prefill_throughput_times_latency = prefill_tl / span;
    out.decode_mean_in_system = decode_in_system / span;
    out.decode_throughput_times_latency = decode_tl / span;
    // End to end: what the pools hold plus what is on the wire, against throughput x mean latency.
    double on_wire = 0, latency = 0;
    for (std::size_t i = 0; i < n; ++i) {
        on_wire += ready[i] - prefill_end[i];
        latency += all.requests[i].finish_s - all.requests[i].arrival_s;
    }
    out.end_mean_in_system = (prefill_in_system + on_wire + decode_in_system) / span;
    out.end_throughput_times_latency = latency / span;
    return out;
}

}  // namespace

DisaggStats run_disagg(const Traffic& traffic, const DisaggSpec& spec, const Slo& slo, std::optional<double> rate) {
    if (!rate) rate = traffic.rate_per_s;
    if (spec.prefill.instances < 1 || spec.decode.instances < 1) throw Error("--disagg", "P and D must each be at least 1 instance");
    if (!(spec.link.bandwidth_bytes_per_s > 0)) throw Error("--interconnect", "an interconnect without bandwidth");
    const bool closed = !rate && traffic.concurrency && traffic.trace.empty();
    std::vector<Request> requests = make_requests(traffic, rate.value_or(0.0));
    std::vector<double> finish;
    if (!closed) return compose(requests, requests, spec, slo, finish);
    // A closed loop: `users` clients, each sending its next request when its last one finishes (the
    // first `users` at time 0), as a benchmark client with a concurrency cap does. Request k >= users
    // is sent at the (k - users)-th completion. Those completions come out of the two pools, so the
    // send times are a fixed point, iterated from "all at once" (core/serve/disagg.h).
    const std::size_t users = static_cast<std::size_t>(std::max<std::int64_t>(1, *traffic.concurrency));
    const std::size_t n = requests.size();
    if (static_cast<std::int64_t>(n) > kMaxClosedLoopRequestsPerUser * static_cast<std::int64_t>(users))
        throw Error("--requests", "a closed loop through the two pools runs at most " + std::to_string(kMaxClosedLoopRequestsPerUser) +
                                      " requests per user (" + std::to_string(n) + " for " + std::to_string(users) +
                                      " users): give fewer requests or more users, or a rate");
    const std::vector<Request> at_once = requests;  // every arrival 0: what the figures are summarised against
    for (Request& r : requests) r.arrival_s = 0;
    DisaggStats out;
    // Settled: no send time moved by more than this (a microsecond, far below any step).
    constexpr double kSettled_s = 1e-6;
    // About 1.3 x requests / users passes in the tests; past twice that, the run reports how far from
    // settled it ended.
    const std::size_t max_passes = 2 * n / users + 8;
    for (std::size_t pass = 0; pass < max_passes; ++pass) {
        out = compose(requests, at_once, spec, slo, finish);
        std::vector<double> done = finish;
        std::sort(done.begin(), done.end());
        double moved = 0;
        for (std::size_t k = users; k < n; ++k) {
            moved = std::max(moved, std::abs(done[k - users] - requests[k].arrival_s));
            requests[k].arrival_s = done[k - users];
        }
        out.closed_loop_passes = static_cast<int>(pass + 1);
        out.closed_loop_residual_s = moved <= kSettled_s ? 0.0 : moved;
        if (moved <= kSettled_s) break;
    }
    return out;
}

}  // namespace quantplan::serve
