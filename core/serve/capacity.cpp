#include "core/serve/capacity.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <memory>
#include <numbers>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/base/text_file.h"

namespace quantplan::serve {
namespace {

constexpr std::int64_t kMaxTokens = std::int64_t{1} << 24;
constexpr std::int64_t kMaxFileLines = 10'000'000;

// Uniform in (0, 1) from 53 bits: the same numbers from every standard library (the library's
// distributions are not specified bit for bit).
double unit(std::mt19937_64& rng) { return (static_cast<double>(rng() >> 11) + 0.5) * (1.0 / 9007199254740992.0); }

double standard_normal(std::mt19937_64& rng) {
    const double u = unit(rng), v = unit(rng);
    return std::sqrt(-2.0 * std::log(u)) * std::cos(2.0 * std::numbers::pi * v);
}

double parse_number(const std::string& text, const std::string& option, const std::string& spec) {
    std::size_t used = 0;
    double v = 0;
    try {
        v = std::stod(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used == 0 || used != text.size() || !std::isfinite(v)) throw Error(option, "'" + spec + "': '" + text + "' is not a number");
    return v;
}

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> out;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= s.size(); ++i)
        if (i == s.size() || s[i] == sep) {
            out.push_back(s.substr(start, i - start));
            start = i + 1;
        }
    return out;
}

}  // namespace

std::vector<std::int64_t> parse_lengths(const std::string& text, const std::string& path, const std::string& option) {
    std::istringstream in(text);
    std::vector<std::int64_t> out;
    std::string line;
    std::int64_t number = 0;
    while (std::getline(in, line)) {
        if (++number > kMaxFileLines) throw Error(option, path + ": more than 10,000,000 lines");
        // The first integer on the line: a bare number, a CSV's first field, or a JSONL value.
        std::size_t i = line.find_first_of("0123456789");
        if (line.find_first_not_of(" \t\r") == std::string::npos || line[line.find_first_not_of(" \t\r")] == '#') continue;
        if (i == std::string::npos) {
            if (number == 1) continue;  // a header
            throw Error(option, path + ":" + std::to_string(number) + ": no length on the line");
        }
        std::size_t j = i;
        while (j < line.size() && std::isdigit(static_cast<unsigned char>(line[j])) && j - i < 10) ++j;
        const std::int64_t v = std::stoll(line.substr(i, j - i));
        if (v < 1 || v > kMaxTokens) throw Error(option, path + ":" + std::to_string(number) + ": a length must be 1 to 16777216 tokens");
        out.push_back(v);
    }
    if (out.empty()) throw Error(option, path + ": holds no lengths");
    return out;
}

LengthSpec parse_length_spec(const std::string& spec, const std::string& option) {
    LengthSpec s;
    s.text = spec;
    if (spec.rfind("file:", 0) == 0) {
        s.kind = LengthSpec::Kind::File;
        s.values = parse_lengths(read_text_file(spec.substr(5), option), spec.substr(5), option);
        return s;
    }
    const std::vector<std::string> parts = split(spec, ':');
    const auto need = [&](std::size_t n, const char* form) {
        if (parts.size() != n) throw Error(option, "'" + spec + "' is not " + form);
    };
    if (parts.size() == 1) {
        s.a = parse_number(parts[0], option, spec);
        if (s.a != std::floor(s.a)) throw Error(option, "'" + spec + "': a fixed length is a whole number of tokens");
    } else if (parts[0] == "uniform") {
        need(3, "uniform:A:B");
        s.kind = LengthSpec::Kind::Uniform;
        s.a = parse_number(parts[1], option, spec);
        s.b = parse_number(parts[2], option, spec);
        if (s.b < s.a) throw Error(option, "'" + spec + "': B is below A");
    } else if (parts[0] == "normal") {
        need(3, "normal:MEAN:SD");
        s.kind = LengthSpec::Kind::Normal;
        s.a = parse_number(parts[1], option, spec);
        s.b = parse_number(parts[2], option, spec);
    } else if (parts[0] == "lognormal") {
        need(3, "lognormal:MEDIAN:SIGMA");
        s.kind = LengthSpec::Kind::Lognormal;
        s.a = parse_number(parts[1], option, spec);
        s.b = parse_number(parts[2], option, spec);
        if (s.b > 4) throw Error(option, "'" + spec + "': SIGMA above 4 is not a length distribution");
    } else {
        throw Error(option, "'" + spec + "' is not N, uniform:A:B, normal:MEAN:SD, lognormal:MEDIAN:SIGMA or file:PATH");
    }
    if (s.a < 1) throw Error(option, "'" + spec + "': lengths start at 1 token");
    if (s.b < 0) throw Error(option, "'" + spec + "': the spread cannot be negative");
    if (s.a > static_cast<double>(kMaxTokens) || s.b > static_cast<double>(kMaxTokens))
        throw Error(option, "'" + spec + "': beyond 16777216 tokens");
    return s;
}

std::int64_t max_length(const LengthSpec& s) {
    switch (s.kind) {
        case LengthSpec::Kind::Fixed: return static_cast<std::int64_t>(s.a);
        case LengthSpec::Kind::Uniform: return static_cast<std::int64_t>(std::floor(s.b));
        case LengthSpec::Kind::Normal: return std::clamp<std::int64_t>(std::llround(s.a + 3.09 * s.b), 1, kMaxTokens);
        case LengthSpec::Kind::Lognormal: return std::clamp<std::int64_t>(std::llround(s.a * std::exp(3.09 * s.b)), 1, kMaxTokens);
        case LengthSpec::Kind::File: return *std::max_element(s.values.begin(), s.values.end());
    }
    return 1;
}

std::int64_t draw_length(const LengthSpec& s, std::mt19937_64& rng) {
    double v = s.a;
    switch (s.kind) {
        case LengthSpec::Kind::Fixed: break;
        case LengthSpec::Kind::Uniform: v = std::floor(s.a + unit(rng) * (std::floor(s.b) - s.a + 1)); break;
        case LengthSpec::Kind::Normal: v = std::round(s.a + s.b * standard_normal(rng)); break;
        case LengthSpec::Kind::Lognormal: v = std::round(s.a * std::exp(s.b * standard_normal(rng))); break;
        case LengthSpec::Kind::File:
            return s.values[static_cast<std::size_t>(unit(rng) * static_cast<double>(s.values.size())) % s.values.size()];
    }
    return std::clamp<std::int64_t>(static_cast<std::int64_t>(v), 1, std::max<std::int64_t>(1, max_length(s)));
}

Arrival parse_arrival(const std::string& spec, const std::string& option) {
    Arrival a;
    a.text = spec;
    if (spec == "poisson") return a;
    if (spec == "burst") {
        a.kind = Arrival::Kind::Burst;
        return a;
    }
    if (spec.rfind("gamma:", 0) == 0) {
        a.kind = Arrival::Kind::Gamma;
        a.cv = parse_number(spec.substr(6), option, spec);
        if (!(a.cv > 0) || a.cv > 10) throw Error(option, "'" + spec + "': the coefficient of variation must be in (0, 10]");
        return a;
    }
    throw Error(option, "'" + spec + "' is not poisson, gamma:CV or burst");
}

namespace {

// A gamma variate of shape k and scale 1 (Marsaglia and Tsang; k < 1 by the k + 1 boost).
double gamma_variate(double k, std::mt19937_64& rng) {
    if (k < 1) return gamma_variate(k + 1, rng) * std::pow(unit(rng), 1.0 / k);
    const double d = k - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
    for (int tries = 0; tries < 1000; ++tries) {
        const double x = standard_normal(rng);
        const double v = std::pow(1 + c * x, 3);
        if (v <= 0) continue;
        if (std::log(unit(rng)) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v;
    }
    return k;  // not reached in practice: the acceptance rate is above 95%
}

}  // namespace

double trace_rate(const std::vector<Request>& trace) {
    if (trace.size() < 2) return 0;
    const double span = trace.back().arrival_s - trace.front().arrival_s;
    return span > 0 ? static_cast<double>(trace.size() - 1) / span : 0.0;
}


std::vector<Request> read_trace(const std::string& path, const std::string& option) { return parse_trace(read_text_file(path, option), path, option); }

std::vector<Request> parse_trace(const std::string& text, const std::string& path, const std::string& option) {
    std::istringstream in(text);
    std::vector<Request> out;
    std::string line;
    std::int64_t number = 0;
    while (std::getline(in, line)) {
        ++number;
        if (number > kMaxFileLines) throw Error(option, path + ": more than 10,000,000 lines");
        const std::size_t first = line.find_first_not_of(" \t\r");
        if (first == std::string::npos || line[first] == '#') continue;
        const std::string where = path + ":" + std::to_string(number);
        double at = 0, in_tokens = 0, out_tokens = 0;
        if (line[first] == '{') {
            const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
            if (j.is_discarded() || !j.is_object()) throw Error(option, where + ": not a JSON object");
            const auto number_of = [&](std::initializer_list<const char*> keys) {
                for (const char* k : keys)
                    if (j.contains(k) && j[k].is_number()) return j[k].get<double>();
                throw Error(option, where + ": needs " + std::string(*keys.begin()));
            };
            at = number_of({"arrival_s", "timestamp"});
            in_tokens = number_of({"input_tokens", "input_length"});
            out_tokens = number_of({"output_tokens", "output_length"});
        } else {
            std::string text = line;
            std::replace(text.begin(), text.end(), ',', ' ');
            std::istringstream fields(text);
            if (!(fields >> at >> in_tokens >> out_tokens)) {
                if (out.empty() && number == 1) continue;  // a header
                throw Error(option, where + ": expects arrival_s, input_tokens, output_tokens");
            }
        }
        if (!std::isfinite(at) || at < 0 || at > 1e9) throw Error(option, where + ": an arrival time is seconds from 0 to 1e9");
        for (double v : {in_tokens, out_tokens})
            if (!(v >= 1) || v > static_cast<double>(kMaxTokens) || v != std::floor(v))
                throw Error(option, where + ": a length is a whole number of tokens, 1 to 16777216");
        if (out.size() >= 1'000'000) throw Error(option, path + ": more than 1,000,000 requests");
        out.push_back({at, static_cast<std::int64_t>(in_tokens), static_cast<std::int64_t>(out_tokens), 0});
    }
    if (out.empty()) throw Error(option, path + ": holds no requests");
    std::stable_sort(out.begin(), out.end(), [](const Request& a, const Request& b) { return a.arrival_s < b.arrival_s; });
    const double start = out.front().arrival_s;
    for (Request& r : out) r.arrival_s -= start;
    return out;
}

std::vector<Request> make_requests(const Traffic& t, double rate) {
    if (!t.trace.empty()) {
        std::vector<Request> out = t.trace;
        const double own = trace_rate(out);
        if (rate > 0 && own > 0)
            for (Request& r : out) r.arrival_s *= own / rate;
        for (Request& r : out) {
            r.shared_prefix_tokens = t.kv_ready ? 0 : std::min(t.prefix_tokens, r.input_tokens);
            r.kv_ready = t.kv_ready;
        }
        return out;
    }
    if (t.requests < 1 || t.requests > 1'000'000) throw Error("--requests", "must be 1 to 1000000");
    std::mt19937_64 lengths(t.seed), arrivals(t.seed ^ 0x9e3779b97f4a7c15ULL);
    std::vector<Request> out;
    out.reserve(static_cast<std::size_t>(t.requests));
    double at = 0;
    const double shape = 1.0 / (t.arrival.cv * t.arrival.cv);
    for (std::int64_t i = 0; i < t.requests; ++i) {
        Request r;
        r.arrival_s = at;
        r.input_tokens = draw_length(t.input, lengths);
        r.output_tokens = draw_length(t.output, lengths);
        r.shared_prefix_tokens = t.kv_ready ? 0 : std::min(t.prefix_tokens, r.input_tokens);
        r.kv_ready = t.kv_ready;
        out.push_back(r);
        if (rate <= 0 || t.arrival.kind == Arrival::Kind::Burst) continue;
        at += t.arrival.kind == Arrival::Kind::Gamma ? gamma_variate(shape, arrivals) / (shape * rate) : -std::log(unit(arrivals)) / rate;
    }
    return out;
}

std::optional<SloTarget> parse_slo(const std::optional<std::string>& text, const std::string& option) {
    if (!text) return std::nullopt;
    SloTarget s;
    std::string number = *text;
    if (const std::size_t at = text->find('@'); at != std::string::npos) {
        const std::string q = text->substr(at + 1);
        number = text->substr(0, at);
        if (q == "p50") s.quantile = 0.5;
        else if (q == "p90") s.quantile = 0.9;
        else if (q == "p99") s.quantile = 0.99;
        else throw Error(option, "'" + *text + "': the percentile is @p50, @p90 or @p99");
    }
    s.seconds = parse_number(number, option, *text);
    if (!(s.seconds > 0) || s.seconds > 1e6) throw Error(option, "'" + *text + "' must be a positive number of seconds");
    return s;
}

std::vector<double> first_token_floors_s(std::vector<double> prompt_tokens, const ModelConfig& model, const SchemeCosts& costs,
                                         const GpuProfile& gpu, std::int64_t tp) {
    const double peak = matmul_peak_flop_per_s(gpu, costs.matmul) * static_cast<double>(std::max<std::int64_t>(tp, 1));
    if (!(peak > 0)) return {};
    const double per_token = 2.0 * static_cast<double>(count_parameters(model).active_block_linears);
    std::sort(prompt_tokens.begin(), prompt_tokens.end());
    double sum = 0;
    for (double& t : prompt_tokens) sum += t, t = sum * per_token / peak;
    return prompt_tokens;
}

EnginePricing engine_pricing(const SchemeCosts& costs, const ModelConfig& model, const GpuProfile& gpu, const engine::EngineSetup& setup,
                             const Workload& w, const Admission& admission, const SpecPricing* spec) {
    EnginePricing p;
    p.limits.max_num_seqs = w.engine.max_num_seqs;
    p.limits.max_num_batched_tokens = w.engine.max_num_batched_tokens;
    // The block size the admission paged the cache in (64 for vLLM's MLA), when it got that far.
    p.limits.block_size_tokens = admission.kv_block_tokens > 0 ? admission.kv_block_tokens : std::max<std::int64_t>(1, w.engine.kv_block_tokens);
    p.limits.kv_cache_tokens = admission.kv_cache_tokens;
    if (engine::kv_groups_priced(costs, setup.profile, setup.choice.version_asked)) {
        // Sliding-window layers keep their window (vLLM's hybrid allocator): the pool is the
        // admission's blocks over every group.
        const HybridKvGroups groups = hybrid_kv_groups(costs);
        p.limits.kv_cache_blocks = admission.kv_cache_blocks;
        p.limits.full_groups = groups.full_groups;
        p.limits.sliding_groups = groups.sliding_groups;
        p.limits.state_groups = groups.state_groups;
        // vLLM 0.11.0 disables prefix caching for Mamba and gated DeltaNet hybrids.
        if (costs.state_layers > 0) p.limits.prefix_caching = false;
        p.limits.sliding_window = costs.sliding_window;
    }
    // The scheduler the engine runs: SGLang and vLLM V0 without chunked prefill run a step of new
    // prefills before any decode (never both in one step); V0 prefills whole prompts, with a budget
    // of max(max_num_batched_tokens, max_model_len) (vllm/config.py SchedulerConfig).
    const bool v0_whole = setup.profile.engine == "vllm" && !setup.profile.defaults.chunked_prefill;
    p.limits.prefill_first = setup.profile.engine == "sglang" || v0_whole;
    p.limits.whole_prompt_prefill = v0_whole;
    p.limits.multi_steps = std::max<std::int64_t>(1, w.engine.num_scheduler_steps);
    // SGLang reserves KV room for the running requests' future tokens before it admits another
    // (sglang/srt/managers/schedule_policy.py PrefillAdder; the constants of sglang/srt/environ.py).
    p.limits.reserve_future_tokens = setup.profile.engine == "sglang";
    // vLLM schedules a prefill chunk whole or not at all, and admits nothing in a step that
    // preempted (v1/core/sched/scheduler.py Scheduler.schedule: allocate_slots for the chunk, the
    // running loop's preemption, `if not preempted_reqs` before the waiting queue).
    p.limits.whole_chunks = setup.profile.engine == "vllm" && !v0_whole;
    if (v0_whole) p.limits.max_num_batched_tokens = std::max(p.limits.max_num_batched_tokens, w.context_tokens);
    // SGLang runs as many requests as its request pool holds, not vLLM's 256:
    // min(max(kv_tokens / context_len x 512, 2048), 4096), at most half the KV tokens
    // (sglang/srt/model_executor/model_runner.py init_memory_pool, 0.4.x; scheduler.py
    // max_running_requests), unless max_num_seqs was set away from the profile's default.
    if (setup.profile.engine == "sglang" && w.engine.max_num_seqs == setup.profile.defaults.max_num_seqs) {
        const double context_len = static_cast<double>(model.max_position_embeddings > 0 ? model.max_position_embeddings : w.context_tokens);
        const auto pool = static_cast<std::int64_t>(static_cast<double>(admission.kv_cache_tokens) / context_len * 512.0);
        p.limits.max_num_seqs = std::max<std::int64_t>(1, std::min(std::clamp<std::int64_t>(pool, 2048, 4096), admission.kv_cache_tokens / 2));
    }
    // The frontend's latency per request: the serving fit's, else the step fit's TTFT overhead
    // (fitted on single requests, where the two are the same thing).
    const engine::ServingTerms& host = setup.profile.serving;
    p.limits.frontend_latency_s = host.fitted ? host.frontend_latency_s : setup.profile.step.ttft_overhead_s;
    p.limits.frontend_serial_s = host.fitted ? host.frontend_serial_s : 0.0;
    // vLLM's API server is one asyncio event loop whose request handler awaits between rendering a
    // request (the chat template) and handing it to the engine: the prompt's tokenization runs off
    // the loop (vllm/entrypoints/openai/serving_engine.py `_tokenize_prompt_input_async`: a thread
    // pool from V0, AsyncMicrobatchTokenizer's batches later), so the loop renders every request
    // ready at once before any of them goes on: rounds (simulator.h). SGLang's is left first come
    // first served (its tokenizer manager's path was not read at each version; tried in rounds
    // with the fit of 2026-12-05, its held-out GH200 closed loop went from TTFT +80% to +148%).
    p.limits.frontend_rounds = setup.profile.engine == "vllm";
    const double fixed_s = setup.profile.step.fixed_step_s + static_cast<double>(model.num_layers) * setup.profile.step.per_layer_s;
    const double per_sequence_s = host.host_per_sequence_s, per_prefill_s = host.host_per_prefill_sequence_s;
    const bool overlap = setup.profile.defaults.host_overlaps_gpu;
    // A mixed step: the decode step of its sequences (fixed and per-layer costs included) plus the
    // kernels of its prefill chunks, batched into one forward, each chunk attending to its own
    // positions and the cache before it (the chunks' own fixed costs only when they run alone).
    // The lambda owns copies (the pricing outlives the caller's locals), its curves point into
    // its own copy of the setup: a shared one, so that a copied pricing keeps them valid.
    const auto owned = std::make_shared<const engine::EngineSetup>(setup);
    const engine::StepLookups lookups = engine::resolve_step_lookups(costs, model, gpu, *owned, w);
    std::shared_ptr<const SpecPricing> sp;
    std::optional<engine::StepLookups> draft_lookups;
    if (spec && spec->request.k > 0) {
        sp = std::make_shared<const SpecPricing>(*spec);
        p.limits.speculative_tokens = spec->request.k;
        p.limits.acceptance = spec->acceptance.per_position;
        p.limits.spec_seed = spec->seed;
        p.limits.spec_disable_above_batch = spec->disable_above_batch;
        p.limits.spec_lookahead_slots = engine::spec_lookahead_slots(setup.profile.engine, spec->request.method, spec->request.k);
        // SGLang runs at most 48 requests with speculation unless max_running_requests was set.
        if (const std::int64_t cap = engine::spec_default_max_running(setup.profile.engine, setup.choice.version_asked);
            cap > 0 && w.engine.max_num_seqs == setup.profile.defaults.max_num_seqs)
            p.limits.max_num_seqs = std::min(p.limits.max_num_seqs, cap);
        if (sp->draft_costs && sp->draft_model) draft_lookups = engine::resolve_step_lookups(*sp->draft_costs, *sp->draft_model, gpu, *owned, w);
    }
    p.cost = [costs, model, gpu, owned, lookups, w, fixed_s, per_sequence_s, per_prefill_s, overlap, sp, draft_lookups](const StepShape& shape) {
        const engine::EngineSetup& setup = *owned;
        double t = 0;
        if (shape.decode_sequences > 0) {
            const std::int64_t context = std::max<std::int64_t>(1, shape.decode_context_tokens / shape.decode_sequences);
            if (sp && shape.speculative_tokens > 0) {
                // A verify step over the speculative tokens the sequences carry (their mean, rounded),
                // with the draft's forwards.
                engine::SpecRequest at = sp->request;
                at.k = std::max<std::int64_t>(1, (shape.speculative_tokens + shape.decode_sequences / 2) / shape.decode_sequences);
                engine::DraftModelPricing dm;
                if (draft_lookups) dm = {&*sp->draft_costs, &*sp->draft_model, *draft_lookups};
                const engine::SpecStep st = engine::engine_spec_step(lookups, costs, model, gpu, setup, w, shape.decode_sequences, context, at,
                                                                     sp->acceptance, sp->draft, sp->terms, draft_lookups ? &dm : nullptr);
                t += st.time_s;
            } else if (shape.steps > 1) {
                // A multi-step window: its forward passes back to back, the context growing by one
                // token a pass (priced at the window's middle); the host's share below once.
                const std::int64_t mid = context + (shape.steps - 1) / 2;
                t += static_cast<double>(shape.steps) * engine::engine_decode_step(lookups, costs, model, gpu, setup, w, shape.decode_sequences, mid).time_s;
            } else {
                t += engine::engine_decode_step(lookups, costs, model, gpu, setup, w, shape.decode_sequences, context).time_s;
            }
        }
        if (!shape.prefill_chunks.empty())
            t += engine::engine_prefill_step(lookups, costs, model, gpu, setup, w, shape.prefill_chunks).time_s -
                 (shape.decode_sequences > 0 ? fixed_s : 0.0);
        // The host's share of the step (ServingTerms): summed with the GPU's, or hidden behind it.
        const double host_s = per_sequence_s * static_cast<double>(shape.decode_sequences + shape.prefill_sequences) +
                              per_prefill_s * static_cast<double>(shape.prefill_sequences);
        t = overlap ? std::max(t, host_s) : t + host_s;
        return std::max(t, 1e-6);
    };
    StepShape lone;
    lone.decode_sequences = 1;
    lone.decode_context_tokens = 1;
    p.fastest_step_s = p.cost(lone);
    return p;
}

Percentiles percentiles(std::vector<double> v) {
    Percentiles p;
    if (v.empty()) return p;
    std::sort(v.begin(), v.end());
    const auto at = [&](double q) {
        const double pos = q * static_cast<double>(v.size() - 1);
        const std::size_t i = static_cast<std::size_t>(pos);
        const std::size_t j = std::min(i + 1, v.size() - 1);
        return v[i] + (pos - static_cast<double>(i)) * (v[j] - v[i]);
    };
    double sum = 0;
    for (double x : v) sum += x;
    p.mean = sum / static_cast<double>(v.size());
    p.p50 = at(0.5);
    p.p90 = at(0.9);
    p.p99 = at(0.99);
    return p;
}

ServeStats summarize(const SimulationResult& sim, const std::vector<Request>& requests, const Slo& slo) {
    ServeStats s;
    std::vector<double> ttft, tpot, e2e, queue;
    std::int64_t good = 0, in_tokens = 0, out_tokens = 0;
    for (std::size_t i = 0; i < sim.requests.size(); ++i) {
        const RequestResult& q = sim.requests[i];
        const double first = q.ttft_s();  // the frontend latency is in it (EngineLimits::frontend_latency_s)
        const double total = q.e2e_s();
        ttft.push_back(first);
        tpot.push_back(q.tpot_s());
        e2e.push_back(total);
        queue.push_back(q.queue_s());
        const bool ok = (!slo.ttft || first <= slo.ttft->seconds) && (!slo.tpot || q.tpot_s() <= slo.tpot->seconds) &&
                        (!slo.e2e || total <= slo.e2e->seconds);
        good += ok ? 1 : 0;
        in_tokens += requests[i].input_tokens;
        out_tokens += q.output_tokens;
    }
    s.ttft_s = percentiles(ttft);
    s.tpot_s = percentiles(tpot);
    s.itl_s = {sim.itl.mean_s(), sim.itl.quantile(0.5), sim.itl.quantile(0.9), sim.itl.quantile(0.99)};
    s.e2e_s = percentiles(e2e);
    s.queue_s = percentiles(queue);
    const double start = requests.empty() ? 0.0 : requests.front().arrival_s;
    s.span_s = std::max(1e-9, sim.end_s - start);
    const double n = static_cast<double>(sim.requests.size());
    s.requests_per_s = n / s.span_s;
    s.output_tokens_per_s = static_cast<double>(out_tokens) / s.span_s;
    s.input_tokens_per_s = static_cast<double>(in_tokens) / s.span_s;
    s.slo_attainment = n > 0 ? static_cast<double>(good) / n : 0.0;
    s.goodput_requests_per_s = static_cast<double>(good) / s.span_s;
    s.preemptions = sim.preemptions;
    s.speculative = sim.speculative_tokens > 0;
    s.spec_tokens = sim.speculative_tokens;
    s.spec_accepted = sim.accepted_tokens;
    s.spec_tokens_per_step = sim.tokens_per_decode_step;
    s.spec_acceptance_rate = sim.speculative_tokens > 0 ? static_cast<double>(sim.accepted_tokens) / static_cast<double>(sim.speculative_tokens) : 0.0;
    s.prefix_hit_tokens = sim.prefix_hit_tokens;
    s.kv_utilization_mean = sim.mean_kv_utilization;
    s.mean_batch = sim.mean_batch;
    s.busy_s = sim.busy_s;
    s.prefill_s = sim.prefill_s;
    // Stable: the latency of the last quarter of the requests (in arrival order) is within 25% of
    // the second quarter's. An overloaded engine's queue grows, and so do the latencies with it.
    if (e2e.size() >= 8) {
        const auto quarter_mean = [&](std::size_t k) {
            const std::size_t from = e2e.size() * k / 4, to = e2e.size() * (k + 1) / 4;
            double sum = 0;
            for (std::size_t i = from; i < to; ++i) sum += e2e[i];
            return sum / static_cast<double>(to - from);
        };
        s.stable = quarter_mean(3) <= 1.25 * quarter_mean(1);
    }
    // Overload: an open-loop run whose queue keeps growing. Its latencies grow with the run's
    // length, so they are no figures; what it completes while requests still arrive is.
    if (requests.size() >= 2) {
        double first = requests.front().arrival_s, last = first;
        for (const Request& r : requests) {
            first = std::min(first, r.arrival_s);
            last = std::max(last, r.arrival_s);
        }
        if (last > first) {
            s.offered_requests_per_s = static_cast<double>(requests.size() - 1) / (last - first);
            std::int64_t done = 0;
            for (const RequestResult& q : sim.requests) done += q.finish_s <= last ? 1 : 0;
            s.completed_requests_per_s = static_cast<double>(done) / (last - first);
            s.overloaded = !s.stable;
        }
    }
    s.meets_slo = (!slo.ttft || s.ttft_s.at(slo.ttft->quantile) <= slo.ttft->seconds) &&
                  (!slo.tpot || s.tpot_s.at(slo.tpot->quantile) <= slo.tpot->seconds) &&
                  (!slo.e2e || s.e2e_s.at(slo.e2e->quantile) <= slo.e2e->seconds);
    return s;
}

ServeStats run_traffic(const Traffic& t, const EnginePricing& pricing, const Slo& slo, std::optional<double> rate, std::size_t timeline_points) {
    if (!rate) rate = t.rate_per_s;
    const bool closed = !rate && t.concurrency;
    const std::vector<Request> requests = make_requests(t, rate.value_or(0.0));  // a trace without a rate: as recorded
    SimulationResult sim = simulate(requests, pricing.limits, pricing.cost, 50'000'000, closed ? *t.concurrency : 0, timeline_points);
    ServeStats s = summarize(sim, requests, slo);
    s.timeline = std::move(sim.timeline);
    return s;
}

namespace {

// The traffic a rate search runs: short runs cannot tell a slowly growing queue from noise, so at
// least 1,000 requests a run, and at most 20,000 so that a search stays within seconds; a burst
// has no rate, so it is searched as Poisson.
Traffic search_traffic(const Traffic& given) {
    Traffic t = given;
    t.requests = std::clamp<std::int64_t>(t.requests, 1000, 20'000);
    if (t.arrival.kind == Arrival::Kind::Burst) t.arrival = Arrival{};
    return t;
}

}  // namespace

std::vector<RatePoint> rate_sweep(const Traffic& given, const EnginePricing& pricing, const Slo& slo, const std::vector<double>& rates) {
    const Traffic t = search_traffic(given);
    std::vector<RatePoint> out;
    for (const double rate : rates) {
        const ServeStats s = run_traffic(t, pricing, slo, rate);
        out.push_back({rate, s.ttft_s, s.tpot_s, s.e2e_s, s.goodput_requests_per_s, s.meets_slo, s.stable});
    }
    return out;
}

namespace {

// What binds in a run that failed (`s`, at a rate just above the highest).
Binding binding_of(const ServeStats& s, const Slo& slo, const EnginePricing& pricing, double mean_request_tokens) {
    Binding b;
    b.sequences_in_cache = mean_request_tokens > 0 ? static_cast<double>(pricing.limits.kv_cache_tokens) / mean_request_tokens : 0.0;
    char held[160];
    std::snprintf(held, sizeof held, "the cache holds %.1f of the traffic's sequences", b.sequences_in_cache);
    double worst = 1.0;
    const auto slo_check = [&](const std::optional<SloTarget>& target, const Percentiles& p, const char* key, const char* name) {
        if (!target) return;
        const double ratio = p.at(target->quantile) / target->seconds;
        if (ratio > worst) {
            worst = ratio;
            b.constraint = key;
            char line[200];
            std::snprintf(line, sizeof line, "%s: p%d %.1f ms above its %.1f ms", name, static_cast<int>(std::lround(target->quantile * 100)),
                          p.at(target->quantile) * 1e3, target->seconds * 1e3);
            b.detail = line;
        }
    };
    slo_check(slo.ttft, s.ttft_s, "ttft_slo", "TTFT SLO");
    slo_check(slo.tpot, s.tpot_s, "tpot_slo", "TPOT SLO");
    slo_check(slo.e2e, s.e2e_s, "e2e_slo", "E2E SLO");
    if (!b.constraint.empty()) return b;
    if (s.preemptions > 0 || s.kv_utilization_mean >= 0.85) {
        b.constraint = "kv_capacity";
        b.detail = std::string("KV capacity: ") + held;
    } else if (s.mean_batch >= 0.95 * static_cast<double>(pricing.limits.max_num_seqs)) {
        b.constraint = "max_num_seqs";
        b.detail = "max_num_seqs: the batch stays at its " + std::to_string(pricing.limits.max_num_seqs) + " sequences";
    } else {
        b.constraint = "compute";
        b.detail = std::string("compute: the GPU's steps are the limit (") + held + ")";
    }
    return b;
}

}  // namespace

RateSearch sustained_rate_search(const Traffic& given, const EnginePricing& pricing, const Slo& slo) {
    const Traffic t = search_traffic(given);
    double mean_tokens = 0;
    {
        const std::vector<Request> drawn = make_requests(t, 0.0);
        for (const Request& q : drawn) mean_tokens += static_cast<double>(q.input_tokens + q.output_tokens);
        mean_tokens /= static_cast<double>(std::max<std::size_t>(drawn.size(), 1));
    }
    std::optional<ServeStats> failed;  // the latest run that failed, at failed_rate
    double failed_rate = 0;
    const auto sustains = [&](double rate) {
        ServeStats s = run_traffic(t, pricing, slo, rate);
        const bool ok = s.meets_slo && s.stable;
        if (!ok) failed = std::move(s), failed_rate = rate;
        return ok;
    };
    Traffic burst = t;
    burst.rate_per_s.reset();
    burst.concurrency.reset();
    burst.arrival.kind = Arrival::Kind::Burst;
    for (Request& r : burst.trace) r.arrival_s = 0;
    const ServeStats saturated = run_traffic(burst, pricing, Slo{}, 0.0);
    double hi = std::max(1e-6, saturated.requests_per_s * 1.2);
    double lo = hi * 1e-3;
    RateSearch out;
    if (!sustains(lo)) {
        out.binding = binding_of(*failed, slo, pricing, mean_tokens);
        return out;
    }
    if (sustains(hi)) {
        out.rate = hi;
        out.binding = binding_of(saturated, Slo{}, pricing, mean_tokens);
        return out;
    }
    for (int i = 0; i < 12; ++i) {
        const double mid = std::sqrt(lo * hi);
        if (sustains(mid)) lo = mid;
        else hi = mid;
    }
    // The binding is the one just above lo, at hi (the initial ceiling when no bisection step failed).
    const ServeStats above = failed && failed_rate == hi ? *failed : run_traffic(t, pricing, slo, hi);
    out.rate = lo;
    out.binding = binding_of(above, slo, pricing, mean_tokens);
    return out;
}

std::optional<double> max_sustained_rate(const Traffic& given, const EnginePricing& pricing, const Slo& slo) {
    return sustained_rate_search(given, pricing, slo).rate;
}

}  // namespace quantplan::serve
