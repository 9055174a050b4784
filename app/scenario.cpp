#include "app/scenario.h"

#include <cstdio>

#include <charconv>
#include <fstream>
#include <set>
#include <sstream>

#include "core/base/error.h"
#include "core/roofline/roofline.h"

namespace quantplan::app {
namespace {

using nlohmann::json;

// Scenario files are a few hundred bytes; anything beyond this is not one.
constexpr std::uintmax_t kMaxScenarioBytes = 1u << 20;

std::string text_value(const json& v, const std::string& where) {
    if (!v.is_string()) throw Error(where, "expects a string");
    return v.get<std::string>();
}

std::int64_t integer_value(const json& v, const std::string& where) {
    if (!v.is_number_integer()) throw Error(where, "expects an integer");
    return v.get<std::int64_t>();
}

double number_value(const json& v, const std::string& where) {
    if (!v.is_number()) throw Error(where, "expects a number");
    return v.get<double>();
}

// A length spec or SLO as the command line takes it: a string, or a number written as one.
std::string spec_value(const json& v, const std::string& where) {
    if (v.is_string()) return v.get<std::string>();
    if (!v.is_number()) throw Error(where, "expects a number or a string");
    char buf[64];
    if (v.is_number_integer()) std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v.get<std::int64_t>()));
    else std::snprintf(buf, sizeof buf, "%.17g", v.get<double>());
    return buf;
}

// A scheme list as the command line takes it: "a,b" or ["a", "b"].
std::string scheme_list(const json& v, const std::string& where) {
    if (v.is_string()) return v.get<std::string>();
    if (!v.is_array() || v.empty()) throw Error(where, "expects a comma-separated string or an array of scheme names");
    std::string out;
    for (const json& s : v) out += (out.empty() ? "" : ",") + text_value(s, where);
    return out;
}

}  // namespace

void apply_scenario(CliOptions& o, const json& scenario, const std::string& where) {
    if (!scenario.is_object()) throw Error(where, "a scenario is a JSON object of option values");
    const CliOptions defaults;
    // "panel" tells the window which panel to bring forward; the report shows them all.
    static const std::set<std::string> kDescriptive = {"name", "title", "note", "description", "panel"};
    for (const auto& [key, value] : scenario.items()) {
        const std::string at = where + ": " + key;
        if (kDescriptive.count(key) != 0) continue;
        if (key == "model") {
            if (o.model == defaults.model) o.model = text_value(value, at);
        } else if (key == "gpu") {
            if (o.gpu == defaults.gpu) o.gpu = text_value(value, at);
        } else if (key == "schemes") {
            if (!o.schemes) o.schemes = scheme_list(value, at);
        } else if (key == "batch") {
            if (o.batch == defaults.batch) o.batch = integer_value(value, at);
        } else if (key == "context") {
            if (o.context == defaults.context) o.context = integer_value(value, at);
        } else if (key == "kv") {
            if (o.kv == defaults.kv) o.kv = text_value(value, at);
        } else if (key == "kernel") {
            if (o.kernel == defaults.kernel) o.kernel = text_value(value, at);
        } else if (key == "profile") {
            if (o.profile == defaults.profile) o.profile = text_value(value, at);
        } else if (key == "engine") {
            if (!o.engine_given) o.engine = text_value(value, at);
        } else if (key == "disagg") {
            if (!o.disagg) o.disagg = text_value(value, at);
        } else if (key == "prefill_tp") {
            if (!o.prefill_tp) o.prefill_tp = integer_value(value, at);
        } else if (key == "decode_tp") {
            if (!o.decode_tp) o.decode_tp = integer_value(value, at);
        } else if (key == "prefill_scheme") {
            if (!o.prefill_scheme) o.prefill_scheme = text_value(value, at);
        } else if (key == "decode_scheme") {
            if (!o.decode_scheme) o.decode_scheme = text_value(value, at);
        } else if (key == "prefill_gpu") {
            if (!o.prefill_gpu) o.prefill_gpu = text_value(value, at);
        } else if (key == "decode_gpu") {
            if (!o.decode_gpu) o.decode_gpu = text_value(value, at);
        } else if (key == "interconnect") {
            if (!o.interconnect) o.interconnect = text_value(value, at);
        } else if (key == "interconnect_links") {
            if (!o.interconnect_links) o.interconnect_links = integer_value(value, at);
        } else if (key == "kv_connector") {
            if (!o.kv_connector) o.kv_connector = text_value(value, at);
        } else if (key == "disagg_sweep") {
            if (!value.is_boolean()) throw Error(at, "expects true or false");
            if (!o.disagg_sweep) o.disagg_sweep = value.get<bool>();
        } else if (key == "spec") {
            // "eagle3:3" as --spec; "" or null: none (the window's "off").
            if (!o.spec && !value.is_null() && !text_value(value, at).empty()) o.spec = text_value(value, at);
        } else if (key == "spec_acceptance") {
            // "0.8,0.6,0.4" or a mean length, as a string or a number.
            if (!o.spec_acceptance && !value.is_null()) {
                if (value.is_number()) {
                    char buf[64];
                    std::snprintf(buf, sizeof buf, "%.17g", number_value(value, at));
                    o.spec_acceptance = buf;
                } else if (!text_value(value, at).empty()) {
                    o.spec_acceptance = text_value(value, at);
                }
            }
        } else if (key == "calibration") {
            // "" is the window's "no calibration file" (docs/gui.md).
            if (!o.calibration && !text_value(value, at).empty()) o.calibration = text_value(value, at);
        } else if (key == "gpu_mem_util") {
            if (!o.gpu_mem_util_given) o.gpu_mem_util = number_value(value, at), o.gpu_mem_util_given = true;
        } else if (key == "tp") {
            if (o.tp == defaults.tp) o.tp = integer_value(value, at);
        } else if (key == "ep") {
            if (o.ep == defaults.ep) o.ep = integer_value(value, at);
        } else if (key == "dp") {
            if (o.dp == defaults.dp) o.dp = integer_value(value, at);
        } else if (key == "nodes") {
            if (o.nodes == defaults.nodes) o.nodes = integer_value(value, at);
        } else if (key == "gpu_p2p") {
            // The window's auto | on | off; auto leaves the GPU profile's.
            const std::optional<bool> p2p = parse_gpu_p2p(text_value(value, at), at);
            if (!o.gpu_p2p) o.gpu_p2p = p2p;
        } else if (key == "goal") {
            if (o.goal == defaults.goal) o.goal = text_value(value, at);
        } else if (key == "accuracy") {
            if (o.accuracy == defaults.accuracy) o.accuracy = text_value(value, at);
        } else if (key == "reasoning") {
            if (!value.is_boolean()) throw Error(at, "expects true or false");
            if (!o.reasoning) o.reasoning = value.get<bool>();
        } else if (key == "enforce_eager") {
            if (!value.is_boolean()) throw Error(at, "expects true or false");
            if (!o.enforce_eager) o.enforce_eager = value.get<bool>();
        } else if (key == "mxfp4_mxfp8") {
            if (!value.is_boolean()) throw Error(at, "expects true or false");
            if (!o.mxfp4_mxfp8) o.mxfp4_mxfp8 = value.get<bool>();
        } else if (key == "max_num_batched_tokens") {
            if (!o.max_num_batched_tokens_given) o.max_num_batched_tokens = integer_value(value, at), o.max_num_batched_tokens_given = true;
        } else if (key == "max_num_seqs") {
            if (!o.max_num_seqs_given) o.max_num_seqs = integer_value(value, at), o.max_num_seqs_given = true;
        } else if (key == "num_scheduler_steps") {
            if (!o.num_scheduler_steps) o.num_scheduler_steps = integer_value(value, at);
        } else if (key == "errorsim_formats") {
            if (!o.errorsim_formats) o.errorsim_formats = text_value(value, at);
        } else if (key == "errorsim_methods") {
            // An empty list means "no method toggled" (round-to-nearest only): the default.
            if (!o.errorsim_methods && !text_value(value, at).empty()) o.errorsim_methods = text_value(value, at);
        } else if (key == "errorsim_activation") {
            if (!o.errorsim_activation) o.errorsim_activation = text_value(value, at);
        } else if (key == "errorsim_outlier") {
            if (!o.errorsim_outlier) o.errorsim_outlier = number_value(value, at);
        } else if (key == "errorsim_seed") {
            if (!o.errorsim_seed) o.errorsim_seed = integer_value(value, at);
        } else if (key == "rate") {
            if (!o.rate) o.rate = number_value(value, at);
        } else if (key == "concurrency") {
            if (!o.concurrency) o.concurrency = integer_value(value, at);
        } else if (key == "requests") {
            if (o.requests == defaults.requests) o.requests = integer_value(value, at);
        } else if (key == "isl") {
            if (o.isl == defaults.isl) o.isl = spec_value(value, at);
        } else if (key == "osl") {
            if (o.osl == defaults.osl) o.osl = spec_value(value, at);
        } else if (key == "arrival") {
            if (o.arrival == defaults.arrival) o.arrival = text_value(value, at);
        } else if (key == "trace") {
            if (!o.trace) o.trace = text_value(value, at);
        } else if (key == "prefix") {
            if (o.prefix == defaults.prefix) o.prefix = integer_value(value, at);
        } else if (key == "slo_ttft") {
            if (!o.slo_ttft) o.slo_ttft = spec_value(value, at);
        } else if (key == "slo_tpot") {
            if (!o.slo_tpot) o.slo_tpot = spec_value(value, at);
        } else if (key == "slo_e2e") {
            if (!o.slo_e2e) o.slo_e2e = spec_value(value, at);
        } else if (key == "target_rate") {
            if (!o.target_rate) o.target_rate = number_value(value, at);
        } else if (key == "seed") {
            if (o.seed == defaults.seed) o.seed = integer_value(value, at);
        } else if (key == "compare_gpus") {
            if (!o.compare_gpus) o.compare_gpus = spec_value(value, at);
        } else if (key == "prices") {
            // {"h100-sxm": 2.99, ...}: USD per GPU-hour; the command line's --price comes first.
            if (!value.is_object()) throw Error(at, "expects an object of GPU id to USD per GPU-hour");
            for (const auto& [gpu, usd] : value.items()) {
                char buf[64];
                std::snprintf(buf, sizeof buf, "%.17g", number_value(usd, at + "." + gpu));
                o.prices.push_back(gpu + "=" + buf);
            }
        } else {
            throw Error(at, "unknown scenario key (docs/report.md lists them)");
        }
    }
}

void apply_scenario_file(CliOptions& o, const std::string& spec) {
    namespace fs = std::filesystem;
    std::string path = spec;
    std::int64_t step = 1;
    bool step_given = false;
    // "FILE#N" names step N, unless a file of that exact name exists.
    if (const std::size_t hash = spec.rfind('#'); hash != std::string::npos && !fs::exists(spec)) {
        const std::string n = spec.substr(hash + 1);
        const auto [end, ec] = std::from_chars(n.data(), n.data() + n.size(), step);
        if (n.empty() || ec != std::errc() || end != n.data() + n.size() || step < 1)
            throw Error("--scenario", "'" + spec + "': a step is FILE#N with N = 1, 2, ...");
        path = spec.substr(0, hash);
        step_given = true;
    }
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) throw Error("--scenario", "'" + path + "' is not a readable file");
    if (fs::file_size(path, ec) > kMaxScenarioBytes || ec)
        throw Error("--scenario", "'" + path + "' is larger than a scenario file can be (1 MiB)");
    std::ifstream in(path, std::ios::binary);
    const json doc = json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded()) throw Error("--scenario", "'" + path + "' is not valid JSON");
    if (!doc.is_object()) throw Error("--scenario", "'" + path + "' must hold a JSON object");
    if (!doc.contains("steps")) {
        if (step_given && step != 1) throw Error("--scenario", "'" + path + "' has no steps");
        apply_scenario(o, doc, path);
        return;
    }
    const json& steps = doc["steps"];
    if (!steps.is_array() || steps.empty()) throw Error("--scenario", "'" + path + "': steps must be a non-empty array");
    if (step > static_cast<std::int64_t>(steps.size()))
        throw Error("--scenario", "'" + path + "' has " + std::to_string(steps.size()) + " steps, not " + std::to_string(step));
    // Later steps override earlier ones; the command line overrides them all.
    json merged = json::object();
    for (std::int64_t i = 0; i < step; ++i) {
        const json& s = steps[static_cast<std::size_t>(i)];
        if (!s.is_object()) throw Error("--scenario", "'" + path + "': step " + std::to_string(i + 1) + " is not an object");
        merged.update(s);
    }
    apply_scenario(o, merged, path + "#" + std::to_string(step));
}

}  // namespace quantplan::app
