#include "core/check/check.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/base/json_guard.h"
#include "core/checkpoint/model_config_json.h"
#include "core/checkpoint/quant_config.h"
#include "core/engine/step_model.h"
#include "core/plan/plan.h"
#include "core/roofline/roofline.h"
#include "core/serve/capacity.h"

namespace quantplan::check {
namespace {

constexpr double kGiB = 1073741824.0;
std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

bool contains_text(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

bool ends_with(const std::string& s, const std::string& tail) { return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0; }

std::string gib(double bytes) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / kGiB);
    return buf;
}

// The bundled model a logged model argument names: the argument itself (a bundled name, a
// repository id of the catalog, a path to a config), then its last path component, then that name
// without the suffixes of derivatives (-Instruct, -AWQ, -GPTQ-Int4, -FP8, ...).
std::optional<ModelConfig> model_from_name(const std::string& argument, const std::filesystem::path& models_dir, std::string* matched) {
    std::vector<std::string> candidates = {argument};
    std::string last = argument;
    // A Hugging Face cache path (".../models--Qwen--Qwen3-30B-A3B-FP8/snapshots/<hash>") names the repository.
    if (const std::size_t at = argument.find("models--"); at != std::string::npos) {
        std::string repo = argument.substr(at + 8);
        repo = repo.substr(0, repo.find('/'));
        if (const std::size_t sep = repo.find("--"); sep != std::string::npos) {
            repo = repo.substr(0, sep) + "/" + repo.substr(sep + 2);
            candidates.push_back(repo);
            last = repo;
        }
    }
    while (!last.empty() && last.back() == '/') last.pop_back();
    if (const std::size_t slash = last.find_last_of('/'); slash != std::string::npos) {
        // "Qwen/Qwen3-8B" is a repository id; "/home/x/Qwen/QwQ-32B" a local path whose last two folders may be one.
        const std::size_t prev = last.find_last_of('/', slash - 1);
        candidates.push_back(last.substr(prev == std::string::npos ? 0 : prev + 1));
        last = last.substr(slash + 1);
    }
    std::string stem = lower(last);
    candidates.push_back(stem);
    static const char* suffixes[] = {"-awq", "-gptq-int4", "-gptq-int8", "-gptq", "-fp8-dynamic", "-fp8", "-int4", "-int8",
                                     "-w4a16", "-w8a8", "-w8a16", "-instruct", "-chat", "-hf", "-quantized.w4a16", "-quantized.w8a8",
                                     "-autoawq", "-qat", "-4bit", "-8bit", "-2507"};
    // An llm-compressor export names its scheme after the model ("-W4A16_awq_sym", "-W8A8-dynamic").
    for (const char* scheme : {"-w4a16", "-w8a8", "-w8a16", "-fp8"})
        if (const std::size_t at = stem.find(scheme); at != std::string::npos && at > 0 && stem.find('-', at + 1) == std::string::npos &&
                                                      stem.find('_', at) != std::string::npos) {
            stem = stem.substr(0, at);
            candidates.push_back(stem);
        }
    for (bool changed = true; changed;) {
        changed = false;
        for (const char* s : suffixes)
            if (ends_with(stem, s)) {
                stem = stem.substr(0, stem.size() - std::string(s).size());
                candidates.push_back(stem);
                changed = true;
            }
    }
    for (const std::string& c : candidates) {
        try {
            ModelConfig m = resolve_model(c, models_dir);
            if (matched) *matched = c;
            return m;
        } catch (const Error&) {
        }
    }
    // A local folder named without punctuation ("qwen25_32b_instruct_HF"): the one bundled model
    // whose name matches it letters and digits alone (a trailing "hf" aside).
    const auto squeeze = [](const std::string& x) {
        std::string o;
        for (char ch : x)
            if (std::isalnum(static_cast<unsigned char>(ch))) o += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        return o;
    };
    std::string want = squeeze(last);
    if (ends_with(want, "hf")) want.resize(want.size() - 2);
    std::string found;
    int matches = 0;
    std::error_code ec;
    if (want.size() >= 6)
        for (const auto& e : std::filesystem::directory_iterator(models_dir, ec)) {
            if (!e.is_directory()) continue;
            if (squeeze(e.path().filename().string()) == want) found = e.path().filename().string(), ++matches;
        }
    if (matches == 1) {
        try {
            ModelConfig m = resolve_model(found, models_dir);
            if (matched) *matched = found;
            return m;
        } catch (const Error&) {
        }
    }
    return std::nullopt;
}

// The bundled GPUs whose usable memory lies within the tolerance of `total_bytes`, nearest first.
std::vector<const GpuProfile*> gpus_by_memory(const std::vector<GpuProfile>& gpus, double total_bytes) {
    std::vector<std::pair<double, const GpuProfile*>> near;
    for (const GpuProfile& g : gpus) {
        const double distance = std::abs(static_cast<double>(g.memory_usable_bytes) - total_bytes) / static_cast<double>(g.memory_usable_bytes);
        if (distance <= kMemoryMatchTolerance) near.emplace_back(distance, &g);
    }
    std::stable_sort(near.begin(), near.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    std::vector<const GpuProfile*> out;
    for (const auto& [d, g] : near) out.push_back(g);
    return out;
}

// What telling two GPUs of one memory class apart would change.
std::string what_differs(const GpuProfile& a, const GpuProfile& b) {
    std::vector<std::string> parts;
    const auto rel = [](double x, double y) { return y > 0 ? std::abs(x - y) / y : 0.0; };
    if (rel(static_cast<double>(a.memory_usable_bytes), static_cast<double>(b.memory_usable_bytes)) > 0.003)
        parts.push_back("the KV budget (usable memory " + gib(static_cast<double>(a.memory_usable_bytes)) + " vs " + gib(static_cast<double>(b.memory_usable_bytes)) + ")");
    char buf[96];
    if (rel(a.memory_bandwidth_bytes_per_s, b.memory_bandwidth_bytes_per_s) > 0.02) {
        std::snprintf(buf, sizeof buf, "decode step times (memory bandwidth %.2f vs %.2f TB/s)", a.memory_bandwidth_bytes_per_s / 1e12, b.memory_bandwidth_bytes_per_s / 1e12);
        parts.push_back(buf);
    }
    if (rel(a.peak.bf16_fp32acc_flop_per_s, b.peak.bf16_fp32acc_flop_per_s) > 0.02) {
        std::snprintf(buf, sizeof buf, "prefill times (bf16 peak %.0f vs %.0f TFLOPS)", a.peak.bf16_fp32acc_flop_per_s / 1e12, b.peak.bf16_fp32acc_flop_per_s / 1e12);
        parts.push_back(buf);
    }
    if (parts.empty()) return "nothing this check prices";
    std::string out;
    for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? (i + 1 == parts.size() ? " and " : ", ") : "") + parts[i];
    return out;
}

// The entry of a printed GPU name: the whole name, case and spacing aside; a name nvidia-smi cut
// with "..." matches the entries it begins.
const DeviceNameEntry* device_entry(const std::vector<DeviceNameEntry>& names, const std::string& printed) {
    const auto norm = [](const std::string& x) {
        std::string o;
        for (char c : x)
            if (!std::isspace(static_cast<unsigned char>(c))) o += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        return o;
    };
    std::string p = norm(printed);
    const bool cut = ends_with(p, "...");
    if (cut) p.resize(p.size() - 3);
    const DeviceNameEntry* prefix = nullptr;
    int prefixes = 0;
    for (const DeviceNameEntry& e : names) {
        const std::string n = norm(e.name);
        if (n == p) return &e;
        if (cut && !p.empty() && n.starts_with(p)) prefix = &e, ++prefixes;
    }
    if (prefixes == 1) return prefix;
    // A name written by a person ("RTX 3090", "GeForce RTX 4090", a table's "3090"): the vendor and
    // brand words aside, when exactly one entry is left.
    const auto bare = [&](const std::string& x) {
        std::string o = norm(x);
        for (const char* word : {"nvidia", "geforce", "rtx"})
            if (const std::size_t at = o.find(word); at != std::string::npos) o.erase(at, std::char_traits<char>::length(word));
        return o;
    };
    const std::string b = bare(printed);
    if (cut || b.size() < 2) return nullptr;
    const DeviceNameEntry* loose = nullptr;
    int matches = 0;
    for (const DeviceNameEntry& e : names)
        if (bare(e.name) == b) loose = &e, ++matches;
    return matches == 1 ? loose : nullptr;
}

const GpuProfile* gpu_by_id(const std::vector<GpuProfile>& gpus, const std::string& id) {
    for (const GpuProfile& g : gpus)
        if (g.id == id) return &g;
    return nullptr;
}

// The GPU from what the log holds: a printed device name first, then the total memory (the nearest
// bundled GPU within the tolerance; every other one that fits is named), then SGLang's free memory
// at start (the smallest bundled GPU that holds it, within 6%: the CUDA context and other
// processes take some), then vLLM's budget: gpu_memory_utilization (the log's, else
// `default_utilization`) x the total holds the weights and the KV cache the log prints, so the
// total is at least their sum over the utilization; the bundled GPUs within kBudgetSlack above
// that bound fit, the nearest first.
void identify_gpu(const StartupLog& log, const CheckInputs& in, CheckResult& r, std::optional<GpuProfile>& gpu, double default_utilization,
                  std::optional<LoggedQuantity> kv_estimate) {
    Identified& id = r.identified;
    for (const LoggedDeviceName& d : log.device_names) {
        const DeviceNameEntry* e = device_entry(in.device_names, d.name);
        if (id.device_name.empty()) id.device_name = d.name;
        if (!e) continue;
        id.device_name = d.name;
        const std::string use = !e->gpu.empty() ? e->gpu : e->stand_in;
        if (const GpuProfile* g = use.empty() ? nullptr : gpu_by_id(in.gpus, use)) {
            gpu = *g;
            id.from["gpu"] = "device name";
            id.gpu_candidates = {g->id};
            if (e->gpu.empty())
                r.notes.push_back("the log names the GPU '" + d.name + "', which quantplan does not bundle; priced as " + g->id + " (" + e->differs +
                                  "); pass --gpu FILE with its own profile");
            if (log.total_memory_bytes) {
                const double distance = std::abs(static_cast<double>(g->memory_usable_bytes) - log.total_memory_bytes->value) / static_cast<double>(g->memory_usable_bytes);
                if (distance > kMemoryMatchTolerance)
                    r.notes.push_back("the logged total memory " + log.total_memory_bytes->as_logged + " is not " + g->id + "'s " +
                                      gib(static_cast<double>(g->memory_usable_bytes)) + " (a MIG slice, or memory another process holds?)");
            }
            return;
        }
        r.unresolved.push_back("GPU: the log names '" + d.name + "', which quantplan does not bundle (" + e->differs + "); pass --gpu FILE");
        return;
    }
    if (!id.device_name.empty()) r.notes.push_back("the log names the GPU '" + id.device_name + "', a name assets/gpu-device-names.json does not list");
    const auto pick = [&](std::vector<const GpuProfile*> fits, std::string evidence, const std::string& basis) {
        if (fits.empty()) return false;
        // A compute capability the log prints keeps the GPUs of that architecture.
        if (!log.compute_capability.empty()) {
            std::vector<const GpuProfile*> same;
            for (const GpuProfile* g : fits)
                if (g->compute_capability == log.compute_capability) same.push_back(g);
            if (!same.empty() && same.size() < fits.size()) {
                fits = same;
                evidence += " and the compute capability the log prints (" + log.compute_capability + ")";
            }
        }
        gpu = *fits.front();
        id.from["gpu"] = basis;
        for (const GpuProfile* g : fits) id.gpu_candidates.push_back(g->id);
        if (fits.size() == 1) {
            r.notes.push_back("GPU " + fits.front()->id + " by " + evidence);
        } else {
            std::string others;
            for (std::size_t i = 1; i < fits.size(); ++i)
                others += (i > 1 ? "; " : "") + fits[i]->id + " (which would change " + what_differs(*fits.front(), *fits[i]) + ")";
            r.notes.push_back("GPU " + fits.front()->id + " by " + evidence + ", the nearest of the bundled GPUs it fits; also fits " + others +
                              "; pass --gpu ID if it is one of those");
        }
        return true;
    };
    if (log.total_memory_bytes) {
        if (pick(gpus_by_memory(in.gpus, log.total_memory_bytes->value), "the logged total memory " + log.total_memory_bytes->as_logged, "total memory")) return;
        r.unresolved.push_back("GPU: the logged total memory " + log.total_memory_bytes->as_logged +
                               " is no bundled GPU's (within 2.5%; a MIG slice or an unbundled GPU?); pass --gpu ID|FILE");
        return;
    }
    if (log.free_memory_at_start_bytes) {
        const double free = log.free_memory_at_start_bytes->value;
        std::vector<const GpuProfile*> fits;
        for (const GpuProfile& g : in.gpus) {
            const double usable = static_cast<double>(g.memory_usable_bytes);
            if (usable >= free && (usable - free) / usable <= 0.06) fits.push_back(&g);
        }
        std::stable_sort(fits.begin(), fits.end(), [](const GpuProfile* a, const GpuProfile* b) { return a->memory_usable_bytes < b->memory_usable_bytes; });
        const std::string line = log.engine == "sglang" ? "SGLang's 'Load weight begin'" : "vLLM's 'Initial free memory'";
        if (pick(fits, "the free memory before the weights " + log.free_memory_at_start_bytes->as_logged + " (" + line + ")", "free memory at start"))
            return;
    }
    const std::optional<LoggedQuantity> kv = log.kv_cache_bytes ? log.kv_cache_bytes : kv_estimate;
    // (Not with kv_cache_memory_bytes: the KV cache is then the size set, whatever the utilization.)
    if (log.engine == "vllm" && log.weights_bytes && kv && default_utilization > 0 && !log.kv_cache_memory_bytes) {
        const double utilization = log.gpu_memory_utilization.value_or(default_utilization);
        double inside = log.weights_bytes->value + kv->value;
        std::string parts = "weights " + log.weights_bytes->as_logged + " + KV cache " + kv->as_logged;
        for (const std::optional<LoggedQuantity>* q : {&log.activation_peak_bytes, &log.non_torch_bytes})
            if (*q) inside += (*q)->value, parts += " + " + (*q)->as_logged;
        const double bound = inside / utilization;
        std::vector<const GpuProfile*> fits;
        for (const GpuProfile& g : in.gpus) {
            const double usable = static_cast<double>(g.memory_usable_bytes);
            if (usable >= bound && (usable - bound) / usable <= kBudgetSlack) fits.push_back(&g);
        }
        std::stable_sort(fits.begin(), fits.end(), [](const GpuProfile* a, const GpuProfile* b) { return a->memory_usable_bytes < b->memory_usable_bytes; });
        char at[96];
        std::snprintf(at, sizeof at, " at gpu_memory_utilization %g: a total of at least %s", utilization, gib(bound).c_str());
        if (pick(fits, "the memory the engine's budget holds (" + parts + at + ")", "memory budget")) return;
    }
    r.unresolved.push_back("GPU: the log names no GPU and states no total memory; pass --gpu ID|FILE");
}

void add_row(CheckResult& r, const std::string& quantity, const std::optional<LoggedQuantity>& logged, std::optional<double> predicted,
             const std::string& unit, const std::string& note = "") {
    if (!logged) return;
    CheckRow row;
    row.quantity = quantity;
    row.logged = logged->value;
    row.as_logged = logged->as_logged;
    row.predicted = predicted;
    row.unit = unit;
    row.note = note;
    if (predicted && logged->value != 0) row.error_fraction = (*predicted - logged->value) / std::abs(logged->value);
    r.rows.push_back(std::move(row));
}


// "log (args: Namespace)": where the reader found a setting.
std::string from_log(const StartupLog& log, const std::string& key) {
    const auto it = log.settings.find(key);
    return it == log.settings.end() ? "log" : "log (" + it->second.form + ")";
}

// Where a profile's defaults come from: its source on the engine's argument defaults.
std::string profile_default_source(const engine::EngineProfile& profile) {
    for (const engine::SourceRef& s : profile.sources)
        if (contains_text(s.file, "arg_utils") || contains_text(s.file, "server_args"))
            return "the " + profile.id + " profile (assets/engines/profiles/" + profile.id + ".json): " + s.repository + " " + s.file + " " + s.function +
                   " at " + s.version;
    return "the " + profile.id + " profile (assets/engines/profiles/" + profile.id + ".json)";
}

std::string shown_number(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

// Every setting the check reports, with the value priced and where it came from: the log, else
// the engine's default for the version (from the profile, or the argument parser's field default).
void report_settings(const StartupLog& log, const std::optional<engine::EngineSetup>& setup, const std::optional<engine::EngineDefaults>& priced,
                     Identified& id) {
    const bool sglang = log.engine == "sglang";
    const std::string parser = sglang ? "sgl-project/sglang python/sglang/srt/server_args.py ServerArgs field default"
                                      : "vllm-project/vllm vllm/engine/arg_utils.py EngineArgs field default";
    const engine::EngineDefaults d = priced ? *priced : setup ? setup->profile.defaults : engine::EngineDefaults{};
    const std::string profile_source = setup ? profile_default_source(setup->profile) : std::string("no engine profile");
    // A fixed field default, as the version's profile holds it.
    const std::string field_source = parser + (setup ? "; as the " + setup->profile.id + " profile holds it (assets/engines/profiles/" + setup->profile.id + ".json)" : "");
    const auto put = [&](const std::string& key, const std::string& logged_key, const std::string& default_value, const std::string& default_source) {
        const auto it = log.settings.find(logged_key);
        if (it != log.settings.end()) id.settings[key] = {it->second.value, "log (" + it->second.form + ")"};
        else id.settings[key] = {default_value, "engine default (" + default_source + ")"};
    };
    const bool v1 = log.engine_generation == "v1" || (setup && setup->profile.id.starts_with("vllm-v1"));
    if (sglang) {
        const std::string fraction = id.gpu_memory_utilization > 0 ? shown_number(id.gpu_memory_utilization) : "by GPU memory and TP";
        put("mem_fraction_static", "mem_fraction_static", fraction, profile_source);
    } else {
        put("gpu_memory_utilization", "gpu_memory_utilization", shown_number(d.gpu_memory_utilization), field_source);
    }
    put("max_model_len", "max_model_len", id.max_model_len > 0 ? std::to_string(id.max_model_len) : "the model's", "the model config's max_position_embeddings");
    put("kv_cache_dtype", "kv_cache_dtype", "auto", parser);
    put("quantization", "quantization", "none (the checkpoint's config decides)", parser);
    put("tensor_parallel_size", "tensor_parallel_size", "1", parser);
    put("pipeline_parallel_size", "pipeline_parallel_size", "1", parser);
    put("data_parallel_size", "data_parallel_size", "1", parser);
    put("dtype", "dtype", "auto", parser);
    put("enforce_eager", "enforce_eager", d.cuda_graphs ? "False" : "True", field_source);
    put("max_num_seqs", "max_num_seqs", std::to_string(d.max_num_seqs), profile_source);
    put("max_num_batched_tokens", "max_num_batched_tokens", std::to_string(d.max_num_batched_tokens), profile_source);
    put("block_size", "block_size", std::to_string(d.block_size_tokens), field_source);
    put("enable_prefix_caching", "enable_prefix_caching", sglang || v1 ? "True" : "False",
        sglang ? parser + " (disable_radix_cache False)" : v1 ? parser + " (None; V1 turns it on)" : parser);
    put("cpu_offload_gb", "cpu_offload_gb", "0", parser);
    // A V1 worker's setting (v1/worker/gpu_worker.py): listed for V1 logs, or where the log sets it.
    if (!sglang && (v1 || log.settings.count("kv_cache_memory_bytes")))
        put("kv_cache_memory_bytes", "kv_cache_memory_bytes", "none (gpu_memory_utilization decides)", parser);
    put("speculative_config", "speculative_config", "none", parser);
    for (const RejectedSetting& x : log.rejected) {
        auto it = id.settings.find(x.key);
        if (it != id.settings.end()) it->second.from += "; the log's " + x.value + " is outside its domain (" + x.domain + ")";
    }
}

}  // namespace

std::optional<std::string> scheme_from_quantization(const std::string& model_name, const std::string& quantization) {
    const std::string q = lower(quantization), name = lower(model_name);
    const bool int8 = name.find("int8") != std::string::npos || name.find("w8a16") != std::string::npos;
    if (q.empty() || q == "none") {
        if (name.find("-awq") != std::string::npos) return "w4a16-g128";
        if (name.find("gptq") != std::string::npos) return int8 ? "w8a16-int8" : "w4a16-g128-sym";
        if (name.find("-fp8") != std::string::npos) return std::nullopt;  // per-channel or 128x128 blocks: the config says which
        return "bf16";
    }
    if (q == "awq" || q == "awq_marlin") return "w4a16-g128";
    if (q == "gptq" || q == "gptq_marlin") return int8 ? "w8a16-int8" : "w4a16-g128-sym";
    if (q == "fp8") return name.find("qwen3") != std::string::npos ? "w8a8-fp8-block128" : "w8a8-fp8";
    // gpt-oss's MXFP4 experts (its config.json declares them: scheme native prices them as shipped).
    if (q == "mxfp4") return "native";
    // llm-compressor's checkpoints name their scheme (W4A16: group 128, its default recipe; W8A8:
    // int8 per-channel with dynamic per-token activations; FP8: per-channel weights).
    if (q == "compressed-tensors" || q == "compressed_tensors") {
        if (name.find("w4a16") != std::string::npos) return "w4a16-g128";
        if (name.find("w8a16") != std::string::npos) return "w8a16-int8";
        if (name.find("w8a8") != std::string::npos) return "w8a8-int8";
        if (name.find("fp8") != std::string::npos) return "w8a8-fp8";
        return std::nullopt;
    }
    return std::nullopt;
}

std::vector<DeviceNameEntry> parse_device_names(std::string_view text, const std::string& source) {
    const nlohmann::json j = parse_untrusted_json(text, source);
    if (!j.is_object() || j.value("format", "") != "quantplan-gpu-device-names/1" || !j.contains("names") || !j["names"].is_array())
        throw Error(source, "not a quantplan-gpu-device-names/1 file (a 'names' list)");
    std::vector<DeviceNameEntry> out;
    for (const nlohmann::json& e : j["names"]) {
        if (!e.is_object() || !e.contains("name") || !e["name"].is_string()) throw Error(source, "every entry needs a 'name'");
        DeviceNameEntry d;
        d.name = e["name"].get<std::string>();
        const auto text_or_empty = [&](const char* key) { return e.contains(key) && e[key].is_string() ? e[key].get<std::string>() : std::string(); };
        d.gpu = text_or_empty("gpu");
        d.stand_in = text_or_empty("stand_in");
        d.differs = text_or_empty("differs");
        d.source = text_or_empty("source");
        if (d.source.empty()) throw Error(source, "'" + d.name + "' has no source");
        out.push_back(std::move(d));
    }
    return out;
}

// The acceptance the log measured beside the published default, and what it makes of a decode
// step: the measured acceptance (else the default) fed into the speculative step at batch 1 and
// at the log's max_num_seqs.
void spec_note(CheckResult& r, const StartupLog& log, const CheckInputs& in, const engine::SpecRequest& spec, const engine::DraftCost& draft,
               const SchemeCosts& c, const ModelConfig& model, const GpuProfile& gpu, const engine::EngineSetup& setup, const Workload& w) {
    std::optional<engine::Acceptance> published;
    if (in.spec_catalog) published = engine::default_acceptance(*in.spec_catalog, model, spec.method, spec.k);
    std::optional<LoggedQuantity> measured;
    if (log.spec_mean_acceptance_length) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.2f (%lld line%s)", *log.spec_mean_acceptance_length, static_cast<long long>(log.spec_metric_lines),
                      log.spec_metric_lines == 1 ? "" : "s");
        measured = LoggedQuantity{*log.spec_mean_acceptance_length, buf, log.spec_metric_line};
    }
    add_row(r, "spec_mean_acceptance_length", measured, published ? std::optional<double>(published->mean_length()) : std::nullopt, "tokens/step",
            published ? "predicted: " + published->source : "no published acceptance bundled for this model and method");
    engine::Acceptance used;
    if (log.spec_mean_acceptance_length && *log.spec_mean_acceptance_length >= 1 && *log.spec_mean_acceptance_length <= static_cast<double>(spec.k + 1)) {
        if (log.spec_per_position.size() == static_cast<std::size_t>(spec.k)) {
            // The logged rates, held to [0, 1] and to the one before (a token is accepted only
            // after every one before it).
            double before = 1.0;
            for (const double p : log.spec_per_position) used.per_position.push_back(before = std::clamp(p, 0.0, before));
        } else {
            used = engine::acceptance_from_mean_length(*log.spec_mean_acceptance_length, spec.k);
        }
        used.source = "the acceptance measured in the log";
    } else if (published) {
        used = *published;
    } else {
        return;
    }
    const engine::SpecTerms terms = in.spec_catalog ? engine::spec_terms_for(*in.spec_catalog, setup.profile.engine) : engine::SpecTerms{};
    const engine::StepLookups k = engine::resolve_step_lookups(c, model, gpu, setup, w);
    std::string text = "speculation with " + used.source + " (mean length " + std::to_string(used.mean_length()).substr(0, 4) + "):";
    for (const std::int64_t batch : {std::int64_t{1}, std::max<std::int64_t>(1, w.engine.max_num_seqs)}) {
        const engine::SpecStep st = engine::engine_spec_step(k, c, model, gpu, setup, w, batch, std::max<std::int64_t>(1, std::min<std::int64_t>(w.context_tokens, 2048)),
                                                             spec, used, draft, terms);
        char buf[160];
        std::snprintf(buf, sizeof buf, " batch %lld TPOT %.2f ms plain, %.2f ms speculating (%.2fx);", static_cast<long long>(batch), st.plain_tpot_s * 1e3,
                      st.tpot_s * 1e3, st.speedup);
        text += buf;
    }
    text.back() = ' ';
    r.notes.push_back(text + "(context min(max_model_len, 2048); docs/speculative.md)");
}

CheckResult check_startup_log(const StartupLog& log, const CheckOptions& options, const CheckInputs& in) {
    CheckResult r;
    Identified& id = r.identified;
    r.notes = log.notes;
    if (log.gpu_p2p && !*log.gpu_p2p)
        r.notes.push_back("the GPUs lack peer-to-peer (the log: \"Custom allreduce is disabled because your platform lacks GPU P2P capability\"): "
                          "every all-reduce goes through host memory; check this server's benchmark results and plan it with --gpu-p2p off");

    // Engine and version: the profile.
    std::string engine_argument = log.engine;
    if (!log.version.empty()) engine_argument += "@" + log.version;
    id.engine = log.engine;
    id.version = log.version;
    id.from["engine"] = "log";
    if (options.engine) {
        engine_argument = *options.engine;
        id.from["engine"] = "option";
    } else if (log.version.empty()) {
        // No version line: the log's wording tells V0 from V1, not the version.
        if (log.engine == "vllm" && log.engine_generation == "v0") engine_argument = "vllm@0.6.3";
        else if (log.engine == "vllm" && log.engine_generation == "v1") engine_argument = "vllm@0.10.1";
        r.unresolved.push_back("engine version: the log has no version line; priced with " + engine_argument +
                               (log.engine_generation.empty() ? "" : " (its " + log.engine_generation + " wording)") + "; pass --engine NAME@VERSION");
        id.from["engine"] = "log wording";
    }
    if (!in.catalog) throw Error("--check", "no engine profiles (assets/engines/profiles/)");
    std::optional<engine::EngineSetup> setup;
    try {
        setup = engine::make_engine_setup(*in.catalog, engine_argument, true);
    } catch (const Error& e) {
        if (options.engine) throw;
        r.unresolved.push_back(std::string("engine profile: ") + e.what() + "; pass --engine NAME@VERSION");
    }
    if (setup) id.profile = setup->profile.id;

    // Model and scheme.
    std::optional<ModelConfig> model;
    std::string matched;
    if (options.model) {
        model = resolve_model(*options.model, in.models_dir);
        id.from["model"] = "option";
    } else if (!log.model.empty()) {
        model = model_from_name(log.model, in.models_dir, &matched);
        id.from["model"] = "log";
    }
    if (model) id.model = model->name;
    // The model's tensors, once for every pricing below.
    const std::vector<TensorInfo> inventory = model ? compress_inventory(tensor_inventory(*model)) : std::vector<TensorInfo>{};
    if (!model) r.unresolved.push_back("model: '" + (log.model.empty() ? std::string("(not in the log)") : log.model) +
                                "' is not a bundled model or one of its derivatives; pass --model NAME|PATH (a config.json)");
    id.quantization = log.quantization.value_or("");
    std::optional<std::string> scheme = options.scheme ? options.scheme : scheme_from_quantization(log.model, id.quantization);
    // A ModelOpt export priced as its config declares it, when the model found declares one.
    if (!scheme && model && model->declared_quantization && model->declared_quantization->method == QuantMethod::ModelOpt &&
        lower(id.quantization).starts_with("modelopt"))
        scheme = "native";
    if (scheme) id.scheme = *scheme;
    else r.unresolved.push_back("scheme: quantization '" + id.quantization + "' of '" + log.model + "' is not mapped to a quantplan scheme");
    id.from["quantization"] = log.quantization ? "log" : "model name";

    // The model's costs at the logged KV format, for what the logged memory says of TP and the GPU.
    std::optional<SchemeCosts> logged_costs;
    if (model && scheme && !in.gpus.empty()) {
        try {
            logged_costs = scheme_costs(*model, inventory, parse_scheme(*scheme),
                                        parse_kv_format(kv_name_is_auto(log.kv_cache_dtype.value_or("auto")) ? "auto" : *log.kv_cache_dtype), in.gpus.front());
        } catch (const Error&) {
        }
    }
    // TP where the log prints none (an excerpt of a worker's lines): the TP at which the model's
    // weights per GPU are what a worker logged, else (V0) at which one block's bytes over the
    // swap space give the logged CPU blocks.
    std::optional<std::int64_t> inferred_tp;
    std::string inferred_basis;
    if (!log.tensor_parallel && logged_costs && (log.weights_bytes || log.cpu_blocks)) {
        const SchemeCosts& c = *logged_costs;
        const auto fits = [&](std::int64_t tp, double predicted, double logged, double tolerance) {
            return model->num_attention_heads % tp == 0 && predicted > 0 && std::abs(logged / predicted - 1.0) <= tolerance;
        };
        for (const std::int64_t tp : {1, 2, 4, 8}) {
            Workload w;
            w.tensor_parallel = tp;
            if (log.weights_bytes && fits(tp, static_cast<double>(resident_weight_bytes_per_gpu(c, w)), log.weights_bytes->value, 0.08)) {
                if (tp > 1) inferred_tp = tp, inferred_basis = "the logged weights " + log.weights_bytes->as_logged + " per GPU";
                break;
            }
            const std::int64_t block = log.block_size_tokens.value_or(setup ? setup->profile.defaults.block_size_tokens : 16);
            const double swap = log.swap_space_gib.value_or(4.0) * kGiB;  // V0's EngineArgs.swap_space default: 4 GiB
            if (!log.weights_bytes && log.cpu_blocks && !has_hybrid_kv_groups(c) &&
                fits(tp, std::floor(swap / (static_cast<double>(block) * static_cast<double>(kv_bytes_per_token_per_gpu(c, tp)))), log.cpu_blocks->value, 0.01)) {
                if (tp > 1) inferred_tp = tp, inferred_basis = "the logged " + log.cpu_blocks->as_logged + " CPU blocks of " +
                                                               (log.swap_space_gib ? "its" : "the default 4 GiB") + " swap space";
                break;
            }
        }
    }
    if (inferred_tp)
        r.notes.push_back("the log prints no tensor-parallel size; " + inferred_basis + " are the model's at TP " + std::to_string(*inferred_tp) +
                          ": priced at TP " + std::to_string(*inferred_tp));
    const std::int64_t log_tp = log.tensor_parallel.value_or(inferred_tp.value_or(1));

    // GPU.
    std::optional<GpuProfile> gpu;
    std::optional<LoggedQuantity> kv_estimate;  // the KV cache's bytes from its logged tokens, when no bytes are logged
    if (options.gpu) {
        gpu = resolve_gpu(*options.gpu, in.gpus_dir);
        id.from["gpu"] = "option";
        id.gpu_candidates = {gpu->id};
    } else {
        // Without a KV-bytes line, the KV tokens (or blocks) the log prints at the model's bytes per
        // token stand in for the budget's KV share (a model with one kind of attention layer).
        const std::optional<LoggedQuantity> tokens = log.kv_cache_tokens ? log.kv_cache_tokens : log.gpu_blocks;
        if (!log.kv_cache_bytes && tokens && logged_costs) {
            const SchemeCosts& c = *logged_costs;
            const std::int64_t block = log.block_size_tokens.value_or(setup ? setup->profile.defaults.block_size_tokens : 16);
            const double count = log.kv_cache_tokens ? tokens->value : tokens->value * static_cast<double>(block);
            // A cache of one kind of layer holds the model's bytes per token for every token it logs.
            // vLLM V1's hybrid allocator (sliding windows: Gemma 3, gpt-oss) logs num_blocks / groups x
            // block tokens, every block a page per layer of a group: tokens x groups x group size x
            // one layer's bytes per token (below 0.9.1 every layer held every token, as one kind).
            const std::int64_t attention_layers = c.full_layers + c.sliding_layers;
            const bool sliding_log = has_hybrid_kv_groups(c) && log.kv_cache_tokens && c.state_layers == 0 && attention_layers > 0 && setup &&
                                     setup->profile.engine == "vllm" &&
                                     !engine::kv_tokens_logged_as_concurrency(setup->profile.memory, setup->choice.version_asked);
            if (!has_hybrid_kv_groups(c) || sliding_log) {
                double per_token = static_cast<double>(kv_bytes_per_token_per_gpu(c, log_tp));
                std::string how = " at the model's KV bytes per token";
                if (sliding_log && engine::kv_groups_priced(c, setup->profile, setup->choice.version_asked)) {
                    const HybridKvGroups g = hybrid_kv_groups(c);
                    per_token = per_token / static_cast<double>(attention_layers) * static_cast<double>(g.groups() * g.group_size);
                    how = " over " + std::to_string(g.groups()) + " groups of " + std::to_string(g.group_size) + " layers";
                }
                const double bytes = count * per_token;
                kv_estimate = LoggedQuantity{bytes, gib(bytes) + " (" + tokens->as_logged + (log.kv_cache_tokens ? " tokens" : " blocks") + how + ")",
                                             tokens->line};
            }
        }
        identify_gpu(log, in, r, gpu, setup && setup->profile.memory.rule == engine::BudgetRule::UtilizationOfTotal ? setup->profile.defaults.gpu_memory_utilization : 0.0,
                     kv_estimate);
    }
    if (gpu) id.gpu = gpu->id;

    // Settings, as far as they are possible (a value outside its domain was set aside by the reader
    // and noted; the engine's default stands in).
    id.tp = log_tp;
    id.from["tp"] = log.tensor_parallel ? from_log(log, "tensor_parallel_size") : inferred_tp ? "logged memory" : "engine default";
    bool priceable_tp = true;
    if (id.tp > 64) {
        r.unresolved.push_back("TP: the log's tensor-parallel size " + std::to_string(id.tp) + " is more GPUs than one model is priced on (64); not priced");
        priceable_tp = false;
    } else if (model && model->num_attention_heads % id.tp != 0) {
        r.unresolved.push_back("TP: the log's tensor-parallel size " + std::to_string(id.tp) + " does not divide the model's " +
                               std::to_string(model->num_attention_heads) + " attention heads (the engine refuses it); not priced");
        priceable_tp = false;
    }
    id.kv_cache_dtype = log.kv_cache_dtype && log.kv_cache_dtype->find("fp8") != std::string::npos ? "fp8" : "bf16";
    id.from["kv_cache_dtype"] = log.kv_cache_dtype ? from_log(log, "kv_cache_dtype") : "engine default";
    id.max_model_len = log.max_model_len.value_or(log.max_concurrency_tokens.value_or(model ? model->max_position_embeddings : 0));
    id.from["max_model_len"] = log.max_model_len ? from_log(log, "max_model_len") : log.max_concurrency_tokens ? "log (concurrency line)" : "model config";

    // Price what can be priced.
    std::optional<Admission> a;
    std::optional<double> predicted_concurrency;  // at the concurrency line's length, as the engine divides its cache
    std::optional<double> concurrency_at_max_model_len;
    std::int64_t block_groups = 1;                // vLLM's hybrid allocator logs num_gpu_blocks over every group
    std::optional<engine::EngineDefaults> used_defaults;
    if (gpu && log.total_memory_bytes && log.total_memory_bytes->value > 0) {
        // The engine budgets against the total CUDA reports on that machine (the driver, ECC, a
        // display or a MIG slice change it): the log's own figure stands for the profile's.
        const double logged = log.total_memory_bytes->value, profile = static_cast<double>(gpu->memory_usable_bytes);
        if (std::abs(logged - profile) / profile > 0.003)
            r.notes.push_back("priced with the logged total memory " + log.total_memory_bytes->as_logged + " (the " + gpu->id + " profile's is " + gib(profile) + ")");
        gpu->memory_usable_bytes = static_cast<std::uint64_t>(logged);
    }
    // The engine on GPU `g` as the log set it up (the version's defaults on that GPU where the log is
    // silent): `s`'s defaults and the workload.
    const auto setup_on = [&](const GpuProfile& g, engine::EngineSetup& s) {
        const engine::EngineDefaults d = engine::defaults_for_run(s.profile, g.id, g.memory_usable_bytes, s.choice.version_asked, id.max_model_len);
        s.profile.defaults = d;
        if (log.chunked_prefill) s.profile.defaults.chunked_prefill = *log.chunked_prefill;
        if (log.enforce_eager) s.profile.defaults.cuda_graphs = !*log.enforce_eager;
        if (log.native_sampler) s.profile.memory.native_sampler = *log.native_sampler;
        Workload w;
        w.gpu_p2p = log.gpu_p2p;
        w.tensor_parallel = id.tp;
        w.kv = parse_kv_format(id.kv_cache_dtype);
        // The reader keeps only values inside their domains: (0, 1] for both fractions.
        w.engine.gpu_memory_utilization = log.gpu_memory_utilization.value_or(d.gpu_memory_utilization);
        if (log.kv_cache_memory_bytes && s.profile.engine == "vllm") w.engine.kv_cache_memory_bytes = static_cast<std::uint64_t>(*log.kv_cache_memory_bytes);
        if (log.mem_fraction_static) s.profile.defaults.mem_fraction_static = *log.mem_fraction_static;
        w.engine.max_num_seqs = log.max_num_seqs.value_or(d.max_num_seqs);
        w.engine.max_num_batched_tokens = log.max_num_batched_tokens.value_or(d.max_num_batched_tokens);
        if (log.block_size_tokens) s.profile.defaults.block_size_tokens = *log.block_size_tokens;
        w.engine.kv_block_tokens = s.profile.defaults.block_size_tokens;
        w.context_tokens = std::max<std::int64_t>(1, id.max_model_len);
        w.kv_auto = !log.kv_cache_dtype || kv_name_is_auto(*log.kv_cache_dtype);
        return w;
    };
    // Several bundled GPUs fit the memory evidence alone: the one whose predicted KV budget is
    // nearest the logged KV cache. The engine's defaults differ by GPU (vLLM V1 from 0.9 gives an
    // H100 4 x an A100's max_num_batched_tokens, and so a larger profiling forward), and so do their
    // usable memories.
    const std::optional<LoggedQuantity> kv_logged = log.kv_cache_bytes ? log.kv_cache_bytes : kv_estimate;
    // The KV budget the engine would give on GPU `g` at the log's settings.
    const auto predicted_kv_on = [&](const GpuProfile& g) {
        engine::EngineSetup s = *setup;
        Workload w = setup_on(g, s);
        w.kv = scheme_kv_format(*model, parse_scheme(*scheme), w, &s, nullptr);
        const SchemeCosts c = engine::costs_as_served(scheme_costs(*model, inventory, parse_scheme(*scheme), w.kv, g), *model, s.profile);
        return static_cast<double>(engine::engine_admission(c, *model, g, s, w, id.max_model_len).budget_bytes);
    };
    // (Not with kv_cache_memory_bytes: the cache is then the size set on every GPU, and says nothing
    // of which one ran.)
    if (!options.gpu && gpu && id.gpu_candidates.size() > 1 && kv_logged && setup && model && scheme && priceable_tp &&
        !log.total_memory_bytes && !log.kv_cache_memory_bytes) {
        double nearest = std::numeric_limits<double>::infinity();
        std::string picked;
        for (const std::string& candidate : id.gpu_candidates) {
            const GpuProfile* g = gpu_by_id(in.gpus, candidate);
            if (!g) continue;
            const double off = std::abs(predicted_kv_on(*g) - kv_logged->value);
            if (off < nearest) nearest = off, picked = candidate;
        }
        if (!picked.empty() && picked != gpu->id) {
            r.notes.push_back("of the GPUs that fit, " + picked + "'s predicted KV cache is nearest the logged " + kv_logged->as_logged +
                              " (its engine defaults and usable memory): priced as " + picked + ", not " + gpu->id);
            gpu = *gpu_by_id(in.gpus, picked);
            id.gpu = picked;
            std::stable_partition(id.gpu_candidates.begin(), id.gpu_candidates.end(), [&](const std::string& x) { return x == picked; });
        }
    }
    // No GPU identified so far (no name, no total memory, and no bundled GPU within kBudgetSlack of
    // the budget the log prints, or no weights line to bound it): every bundled GPU whose predicted
    // KV cache at the log's settings is within kKvIdentifyTolerance of the logged one fits, the
    // nearest first. What the log proves still rules GPUs out: a printed compute capability keeps
    // its architecture's, SGLang's free memory at start is at most the total, and the weights and
    // KV cache the log prints are at most gpu_memory_utilization of it. (The prediction holds no
    // speculative draft: a log that ran one and names no GPU is priced without it here.)
    if (!options.gpu && !gpu && kv_logged && kv_logged->value > 0 && setup && model && scheme && priceable_tp && !log.total_memory_bytes &&
        log.device_names.empty() && !log.kv_cache_memory_bytes) {
        double at_least = log.free_memory_at_start_bytes ? log.free_memory_at_start_bytes->value : 0.0;
        if (log.engine == "vllm" && log.weights_bytes && log.gpu_memory_utilization && *log.gpu_memory_utilization > 0 && !log.kv_cache_memory_bytes)
            at_least = std::max(at_least, (log.weights_bytes->value + kv_logged->value) / *log.gpu_memory_utilization);
        struct Fit {
            double error;  // predicted / logged - 1
            const GpuProfile* gpu;
        };
        std::vector<Fit> fits;
        for (const GpuProfile& g : in.gpus) {
            if (!log.compute_capability.empty() && g.compute_capability != log.compute_capability) continue;
            if (static_cast<double>(g.memory_usable_bytes) < at_least) continue;
            double error = 0.0;
            try {
                error = predicted_kv_on(g) / kv_logged->value - 1.0;
            } catch (const Error&) {
                continue;  // a setup the pricing refuses on this GPU: it does not fit
            }
            if (std::abs(error) <= kKvIdentifyTolerance) fits.push_back({error, &g});
        }
        std::stable_sort(fits.begin(), fits.end(), [](const Fit& a, const Fit& b) { return std::abs(a.error) < std::abs(b.error); });
        if (!fits.empty()) {
            const GpuProfile& first = *fits.front().gpu;
            gpu = first;
            id.gpu = first.id;
            id.from["gpu"] = "predicted KV cache";
            id.gpu_candidates.clear();
            for (const Fit& f : fits) id.gpu_candidates.push_back(f.gpu->id);
            std::erase_if(r.unresolved, [](const std::string& u) { return u.starts_with("GPU: the log names no GPU"); });
            char error[32];
            std::snprintf(error, sizeof error, "%+.1f%%", fits.front().error * 100.0);
            std::string note = "GPU " + first.id + " by the logged KV cache " + kv_logged->as_logged +
                               ": its predicted KV cache at the log's settings is " + error + " from it";
            if (fits.size() > 1) {
                note += ", the nearest of the bundled GPUs within " + std::to_string(std::lround(kKvIdentifyTolerance * 100)) + "%; also fits ";
                for (std::size_t i = 1; i < fits.size(); ++i)
                    note += (i > 1 ? "; " : "") + fits[i].gpu->id + " (which would change " + what_differs(first, *fits[i].gpu) + ")";
            }
            r.notes.push_back(note + "; the log names no GPU and no total memory: pass --gpu ID if it is another");
        }
    }
    if (setup && model && gpu && scheme && priceable_tp) {
        Workload w = setup_on(*gpu, *setup);
        id.gpu_memory_utilization = log.engine == "sglang" ? engine::sglang_mem_fraction_static(setup->profile, gpu->memory_usable_bytes, id.tp)
                                                           : w.engine.gpu_memory_utilization;
        id.from["gpu_memory_utilization"] = log.gpu_memory_utilization ? from_log(log, "gpu_memory_utilization")
                                            : log.mem_fraction_static  ? from_log(log, "mem_fraction_static")
                                                                       : "engine default";
        used_defaults = setup->profile.defaults;
        // --kv-cache-dtype auto (or not logged, w.kv_auto): the engine may cache in the format the checkpoint declares.
        std::string kv_note;
        w.kv = scheme_kv_format(*model, parse_scheme(*scheme), w, &*setup, &kv_note);
        if (!kv_note.empty()) {
            id.kv_cache_dtype = kv_format_name(w.kv);
            id.from["kv_cache_dtype"] = "checkpoint";
            r.notes.push_back(kv_note);
        }
        const SchemeCosts c = engine::costs_as_served(scheme_costs(*model, inventory, parse_scheme(*scheme), w.kv, *gpu), *model, setup->profile);
        // Speculative decoding as the log ran it: the draft's weights and cache and the lookahead
        // slots in the budget (a draft model's own weights are not known from the log alone).
        std::optional<engine::SpecRequest> spec;
        if (!log.speculative_method.empty() && log.speculative_method != "draft" && log.speculative_tokens && log.speculative_topk.value_or(1) == 1) {
            spec = engine::parse_spec(log.speculative_method + ":" + std::to_string(*log.speculative_tokens), "--check");
            if (spec->method == engine::SpecMethod::Mtp && model->mtp_layers == 0 && !model->qwen3_next_mtp) spec.reset();
        }
        engine::DraftCost draft;
        if (spec) {
            draft = engine::draft_cost(*spec, *model, c, nullptr, nullptr, id.tp);
            w.engine.draft_weight_bytes_per_gpu = draft.weight_bytes;
            w.engine.draft_kv_bytes_per_token_per_gpu = draft.kv_bytes_per_token;
            w.engine.lookahead_tokens = spec->k + engine::spec_lookahead_slots(setup->profile.engine, spec->method, spec->k);
            r.notes.push_back("speculative decoding " + log.speculative_method + ":" + std::to_string(spec->k) + " (" + from_log(log, "speculative_config") +
                              "): " + draft.description + " and " + std::to_string(w.engine.lookahead_tokens) +
                              " lookahead slots per sequence priced in the budget");
        } else if (log.speculative) {
            r.notes.push_back("speculative decoding '" + clip_text(*log.speculative, 80) +
                              "': not priced (a draft model, a draft tree, or no K in the log); the budget is the target's alone");
        }
        a = engine::engine_admission(c, *model, *gpu, *setup, w, id.max_model_len);
        if (w.engine.kv_cache_memory_bytes > 0)
            r.notes.push_back("kv_cache_memory_bytes " + std::to_string(w.engine.kv_cache_memory_bytes) + " (" + from_log(log, "kv_cache_memory_bytes") +
                              "): the KV cache is that size per GPU; gpu_memory_utilization is not consulted" +
                              (a->reason.empty() ? std::string() : " (" + a->reason + ")"));
        if (spec) spec_note(r, log, in, *spec, draft, c, *model, *gpu, *setup, w);
        // Concurrency as the engine computes it (sliding windows and Mamba state included), at the
        // length the log's line names.
        if (a->budget_bytes > 0) {
            const std::int64_t length = log.max_concurrency_tokens.value_or(id.max_model_len);
            Admission at = *a;
            const bool hybrid = engine::kv_groups_priced(c, setup->profile, setup->choice.version_asked);
            divide_kv_budget(at, c, a->kv_block_tokens, std::max<std::int64_t>(length, 1), w.engine.max_num_batched_tokens, hybrid, id.tp);
            predicted_concurrency = at.max_concurrency;
            if (length == id.max_model_len) concurrency_at_max_model_len = at.max_concurrency;
            else if (id.max_model_len > 0) {
                Admission full = *a;
                divide_kv_budget(full, c, a->kv_block_tokens, id.max_model_len, w.engine.max_num_batched_tokens, hybrid, id.tp);
                concurrency_at_max_model_len = full.max_concurrency;
            }
            if (hybrid && has_hybrid_kv_groups(c)) block_groups = std::max<std::int64_t>(hybrid_kv_groups(c).groups(), 1);
        }
    }
    report_settings(log, setup, used_defaults, id);
    const auto p = [&](double v) -> std::optional<double> { return a ? std::optional<double>(v) : std::nullopt; };
    add_row(r, "weights_bytes", log.weights_bytes, a ? p(static_cast<double>(a->weight_bytes)) : std::nullopt, "bytes");
    add_row(r, "activation_peak_bytes", log.activation_peak_bytes,
            a ? p(static_cast<double>(a->activation_workspace_bytes + a->sampler_workspace_bytes)) : std::nullopt, "bytes");
    add_row(r, "non_torch_bytes", log.non_torch_bytes, a ? p(static_cast<double>(a->runtime_overhead_bytes)) : std::nullopt, "bytes",
            "predicted: the profile's fitted non-torch memory (with CUDA graphs where the version counts them)");
    add_row(r, "cuda_graph_bytes", log.cuda_graph_bytes, a && setup && setup->profile.memory.cuda_graph_counted ? p(static_cast<double>(setup->profile.memory.cuda_graph_bytes)) : std::nullopt,
            "bytes", setup && !setup->profile.memory.cuda_graph_counted ? "outside the KV budget in this version: not predicted" : "");
    add_row(r, "kv_cache_bytes", log.kv_cache_bytes, a ? p(static_cast<double>(std::max<std::int64_t>(a->budget_bytes, 0))) : std::nullopt, "bytes");
    std::optional<LoggedQuantity> tokens = log.kv_cache_tokens;
    if (!tokens && log.gpu_blocks && setup) {
        // The block the cache is paged in (raised for an MLA latent or a Mamba state), over the groups.
        const std::int64_t block = a && a->kv_block_tokens > 0 ? a->kv_block_tokens : setup->profile.defaults.block_size_tokens;
        tokens = *log.gpu_blocks;
        tokens->value *= static_cast<double>(block) / static_cast<double>(block_groups);
        tokens->as_logged = log.gpu_blocks->as_logged + " blocks x " + std::to_string(block) +
                            (block_groups > 1 ? " / " + std::to_string(block_groups) + " groups" : std::string());
    }
    // From some release the logged token count is the concurrency at max_model_len times it.
    std::optional<double> predicted_tokens = a ? p(static_cast<double>(a->kv_cache_tokens)) : std::nullopt;
    if (a && setup && log.kv_cache_tokens && engine::kv_tokens_logged_as_concurrency(setup->profile.memory, setup->choice.version_asked) &&
        concurrency_at_max_model_len && id.max_model_len > 0)
        predicted_tokens = std::floor(*concurrency_at_max_model_len * static_cast<double>(id.max_model_len));
    add_row(r, "kv_cache_tokens", tokens, predicted_tokens, "tokens");
    add_row(r, "max_concurrency", log.max_concurrency, a && id.max_model_len > 0 ? predicted_concurrency : std::nullopt, "x");

    // The memory term that differs most, with its cause.
    const CheckRow* worst = nullptr;
    for (const CheckRow& row : r.rows)
        if (row.unit == "bytes" && row.quantity != "kv_cache_bytes" && row.predicted &&
            (!worst || std::abs(*row.predicted - row.logged) > std::abs(*worst->predicted - worst->logged)))
            worst = &row;
    if (worst) {
        std::string cause;
        if (worst->quantity == "activation_peak_bytes" && setup && setup->profile.memory.profile_covers_max_model_len_without_chunking &&
            !setup->profile.defaults.chunked_prefill)
            cause = ": this V0 version profiles max(max_num_batched_tokens, max_model_len) tokens in one forward";
        else if (worst->quantity == "activation_peak_bytes")
            cause = ": the profiling forward's peak (max_num_batched_tokens tokens and the sampler)";
        else if (worst->quantity == "weights_bytes")
            cause = ": the checkpoint's resident bytes per GPU (a different checkpoint or scheme than identified, or weights kept in another dtype)";
        else if (worst->quantity == "non_torch_bytes")
            cause = ": CUDA context, NCCL and allocator memory outside PyTorch (fitted, not derived)";
        else if (worst->quantity == "cuda_graph_bytes")
            cause = ": the captured graphs (not modelled beyond the fitted constant)";
        r.largest_difference = worst->quantity + " logged " + gib(worst->logged) + ", predicted " + gib(*worst->predicted) + cause;
    }
    // The KV cache is what the budget leaves: when it differs more than any printed term, the
    // difference lies in the terms the log does not print, sized by what the log's budget leaves.
    const CheckRow* kv = nullptr;
    for (const CheckRow& row : r.rows)
        if (row.quantity == "kv_cache_bytes" && row.predicted) kv = &row;
    if (kv && a && (!worst || std::abs(*kv->predicted - kv->logged) > std::abs(*worst->predicted - worst->logged))) {
        const double budget = static_cast<double>(a->engine_memory_bytes);
        double printed = log.weights_bytes ? log.weights_bytes->value : static_cast<double>(a->weight_bytes);
        std::string unprinted;
        const auto term = [&](const std::optional<LoggedQuantity>& q, const char* name) {
            if (q) printed += q->value;
            else unprinted += std::string(unprinted.empty() ? "" : ", ") + name;
        };
        term(log.activation_peak_bytes, "activation peak");
        term(log.non_torch_bytes, "non-torch memory");
        const double predicted_rest = static_cast<double>(a->activation_workspace_bytes + a->sampler_workspace_bytes + a->runtime_overhead_bytes) -
                                      (log.activation_peak_bytes ? static_cast<double>(a->activation_workspace_bytes + a->sampler_workspace_bytes) : 0.0) -
                                      (log.non_torch_bytes ? static_cast<double>(a->runtime_overhead_bytes) : 0.0);
        const double logged_rest = budget - printed - kv->logged;
        r.largest_difference = "kv_cache_bytes logged " + gib(kv->logged) + ", predicted " + gib(*kv->predicted) + ": what the budget (" + gib(budget) +
                               ") leaves beside the terms ";
        if (unprinted.empty())
            r.largest_difference += "the log prints; every term is printed, so the budget itself differs (the total memory or the utilization)";
        else
            r.largest_difference += "the log prints goes to " + unprinted + ": " + gib(logged_rest) + " by the log, " + gib(predicted_rest) +
                                    " predicted";
    }
    // No KV bytes printed: the tokens stand for the cache, compared by their relative error.
    const CheckRow* tokens_row = nullptr;
    for (const CheckRow& row : r.rows)
        if (row.quantity == "kv_cache_tokens" && row.error_fraction) tokens_row = &row;
    if (!kv && tokens_row && a && (!worst || std::abs(*tokens_row->error_fraction) > std::abs(worst->error_fraction.value_or(0.0)))) {
        char err[32];
        std::snprintf(err, sizeof err, "%+.1f%%", *tokens_row->error_fraction * 100.0);
        r.largest_difference = "kv_cache_tokens logged " + tokens_row->as_logged + ", predicted " + std::to_string(static_cast<long long>(*tokens_row->predicted)) +
                               " (" + err + "): the cache is what the budget (" + gib(static_cast<double>(a->engine_memory_bytes)) +
                               ") leaves; this log prints no KV bytes, and the terms beside the weights it does not print (activation peak, "
                               "non-torch memory) hold the difference, or the GPU's usable memory does";
    }
    return r;
}

CheckResult check_bench_result(const BenchResult& b, const CheckOptions& options, const CheckInputs& in) {
    CheckResult r;
    Identified& id = r.identified;
    id.engine = b.engine;
    r.notes.insert(r.notes.end(), b.notes.begin(), b.notes.end());
    if (!in.catalog) throw Error("--check", "no engine profiles (assets/engines/profiles/)");
    std::string engine_argument = options.engine.value_or(b.engine + (b.engine_version.empty() ? "" : "@" + b.engine_version));
    if (!b.engine_version.empty()) id.version = b.engine_version;
    id.from["engine"] = options.engine ? "option" : b.engine_version.empty() ? "backend" : "result";
    if (!options.engine && b.engine_version.empty())
        r.unresolved.push_back("engine version: a benchmark result does not name it; priced with the newest " + b.engine +
                               " profile; pass --engine NAME@VERSION");
    engine::EngineSetup setup = engine::make_engine_setup(*in.catalog, engine_argument, true);
    id.profile = setup.profile.id;
    if (id.version.empty()) id.version = setup.choice.version_asked;
    std::optional<ModelConfig> model;
    if (options.model) model = resolve_model(*options.model, in.models_dir), id.from["model"] = "option";
    else if (!b.model.empty()) model = model_from_name(b.model, in.models_dir, nullptr), id.from["model"] = "result";
    if (model) id.model = model->name;
    else r.unresolved.push_back("model: '" + b.model + "' is not a bundled model or one of its derivatives; pass --model NAME|PATH");
    const std::optional<std::string> scheme = options.scheme ? options.scheme : scheme_from_quantization(b.model, "");
    if (scheme) id.scheme = *scheme;
    else r.unresolved.push_back("scheme: the checkpoint's format cannot be told from '" + b.model + "'");
    std::optional<GpuProfile> gpu;
    if (options.gpu) gpu = resolve_gpu(*options.gpu, in.gpus_dir), id.gpu = gpu->id, id.from["gpu"] = "option";
    else r.unresolved.push_back("GPU: a benchmark result does not name it; pass --gpu ID|FILE");
    id.kv_cache_dtype = "bf16";
    // Tensor parallelism: --tp, else the result's own (SGLang's server_info), else 1.
    id.tp = options.tp.value_or(b.tensor_parallel.value_or(1));
    id.from["tp"] = options.tp ? "option" : b.tensor_parallel ? "result" : "engine default";
    if (id.tp < 1 || id.tp > 8) throw Error("--tp", "tensor-parallel degree must be 1 to 8, got " + std::to_string(id.tp));
    if (model && model->num_attention_heads % id.tp != 0)
        throw Error("--tp", std::to_string(id.tp) + " does not divide the " + std::to_string(model->num_attention_heads) + " attention heads");

    // Mean lengths beyond any context an engine serves are not priced (a hostile total would make
    // the prefill loop run for ever).
    constexpr double kMaxTokens = 1 << 24;
    const auto length = [&](const std::optional<double>& v) -> std::int64_t {
        return v && *v >= 1 && *v <= kMaxTokens ? static_cast<std::int64_t>(std::llround(*v)) : 0;
    };
    const std::int64_t in_tokens = length(b.mean_input_tokens), out_tokens = length(b.mean_output_tokens);
    if (in_tokens > 0) id.run["input_tokens"] = static_cast<double>(in_tokens);
    if (out_tokens > 0) id.run["output_tokens"] = static_cast<double>(out_tokens);
    if (b.max_concurrency) id.run["concurrency"] = static_cast<double>(*b.max_concurrency);
    if (b.num_prompts) id.run["num_prompts"] = static_cast<double>(*b.num_prompts);
    if (b.request_rate) id.run["request_rate"] = *b.request_rate;
    std::int64_t concurrency = 0;  // 0: none
    if (b.max_concurrency && *b.max_concurrency >= 1 && *b.max_concurrency <= (1 << 20)) concurrency = *b.max_concurrency;
    if (concurrency == 0 && !b.request_rate && b.num_prompts) concurrency = *b.num_prompts;  // every request at once
    // The run simulated: the benchmark's requests (its prompt count, at its mean lengths) through
    // the engine's continuous batching (core/serve), each step priced by the engine profile's step
    // model; closed loop at the concurrency cap, or Poisson arrivals at the request rate.
    std::map<std::string, double> predicted;
    std::int64_t prompts = std::clamp<std::int64_t>(b.completed.value_or(b.num_prompts.value_or(200)), 1, 5000);
    // The file's own per-request lengths when it has them (requests that produced no token, failed
    // ones, are left out), else every request at the run's means.
    std::vector<serve::Request> own;
    std::int64_t longest = in_tokens + out_tokens;
    for (std::size_t i = 0; i < b.input_lens.size() && own.size() < 5000; ++i)
        if (b.input_lens[i] >= 1 && b.output_lens[i] >= 1) {
            own.push_back({0.0, b.input_lens[i], b.output_lens[i]});
            longest = std::max(longest, b.input_lens[i] + b.output_lens[i]);
        }
    if (!own.empty()) {
        prompts = static_cast<std::int64_t>(own.size());
        if (concurrency == 0 && !b.request_rate) concurrency = prompts;
    }
    const bool by_rate = b.request_rate && !b.max_concurrency;
    const std::string note = by_rate ? "simulated: Poisson arrivals at the run's request rate (seed 1), the engine profile's step model"
                                     : "simulated: a closed loop at the run's concurrency, the engine profile's step model";
    if (model && gpu && scheme && in_tokens > 0 && out_tokens > 0 && (concurrency > 0 || by_rate)) {
        // A benchmark file does not state max_model_len: the run's longest request stands for it.
        setup.profile.defaults = engine::defaults_for_run(setup.profile, gpu->id, gpu->memory_usable_bytes, setup.choice.version_asked, longest);
        Workload w;
        w.engine.gpu_memory_utilization = setup.profile.defaults.gpu_memory_utilization;
        w.engine.max_num_seqs = setup.profile.defaults.max_num_seqs;
        w.engine.max_num_batched_tokens = setup.profile.defaults.max_num_batched_tokens;
        w.engine.kv_block_tokens = setup.profile.defaults.block_size_tokens;
        w.context_tokens = longest;
        w.tensor_parallel = id.tp;
        w.gpu_p2p = options.gpu_p2p;
        if (options.num_scheduler_steps) {
            // vLLM V0's multi-step scheduling (a result names no server setting: the option says it).
            if (const std::string why = engine::multi_step_refusal(setup.profile, setup.choice.version_asked, *options.num_scheduler_steps); !why.empty())
                throw Error("--num-scheduler-steps", why);
            w.engine.num_scheduler_steps = *options.num_scheduler_steps;
            r.notes.push_back("multi-step scheduling: " + std::to_string(*options.num_scheduler_steps) +
                              " decode passes a schedule (--num-scheduler-steps), streamed together, so the predicted ITL is one gap a window");
        }
        const std::vector<TensorInfo> inventory = compress_inventory(tensor_inventory(*model));
        const SchemeCosts c = engine::costs_as_served(scheme_costs(*model, inventory, parse_scheme(*scheme), w.kv, *gpu), *model, setup.profile);
        const Admission a = engine::engine_admission(c, *model, *gpu, setup, w);
        // Every prompt sent at once: the 99th percentile as the clients compute it (numpy's,
        // interpolated at 0.99 x (n - 1) between order statistics) is at least the same
        // interpolation of the first tokens' floors (serve::first_token_floors_s).
        const auto p99 = b.metrics.find("ttft_s_p99");
        if (!b.request_rate && concurrency >= prompts && p99 != b.metrics.end() && p99->second > 0) {
            std::vector<double> lens;
            for (const serve::Request& q : own) lens.push_back(static_cast<double>(q.input_tokens));
            if (own.empty()) lens.assign(static_cast<std::size_t>(prompts), static_cast<double>(in_tokens));
            double sum = 0;
            for (const double l : lens) sum += l;
            const std::vector<double> done = serve::first_token_floors_s(lens, *model, c, *gpu, id.tp);
            const double peak = matmul_peak_flop_per_s(*gpu, c.matmul) * static_cast<double>(id.tp);
            double floor_s = 0;
            if (!done.empty()) {
                const double at = 0.99 * static_cast<double>(done.size() - 1);
                const auto lo = static_cast<std::size_t>(at);
                floor_s = lo + 1 < done.size() ? done[lo] + (at - static_cast<double>(lo)) * (done[lo + 1] - done[lo]) : done.back();
            }
            if (p99->second < floor_s) {
                char buf[360];
                std::snprintf(buf, sizeof buf,
                              "the 99th-percentile TTFT %.2f s is under %.2f s, what the first 99%% of its %zu prompts (%.0f tokens in all) take "
                              "at the %d GPU(s)' peak (%.0f TFLOP/s) for their block linears alone: those prompts did not all run their prefill here. ",
                              p99->second, floor_s, lens.size(), sum, static_cast<int>(id.tp), peak / 1e12);
                r.notes.push_back(std::string(buf) +
                                  "A prefix cache that already held them would explain it (vLLM V1 and SGLang cache prefixes by default, and a "
                                  "rerun with the benchmark's default seed sends the same random prompts), or a setup other than the one priced");
            }
        }
        if (a.fits) {
            Admission room = a;
            room.kv_cache_tokens = std::max<std::int64_t>(a.kv_cache_tokens, w.context_tokens + w.engine.kv_block_tokens);
            const serve::EnginePricing pricing = serve::engine_pricing(c, *model, *gpu, setup, w, room);
            std::vector<serve::Request> requests =
                by_rate ? serve::poisson_requests(prompts, *b.request_rate, in_tokens, out_tokens, 1)
                        : std::vector<serve::Request>(static_cast<std::size_t>(prompts), serve::Request{0.0, in_tokens, out_tokens});
            for (std::size_t i = 0; i < own.size(); ++i) {
                requests[i].input_tokens = own[i].input_tokens;
                requests[i].output_tokens = own[i].output_tokens;
            }
            const serve::SimulationResult sim =
                serve::simulate(requests, pricing.limits, pricing.cost, 5'000'000, by_rate ? 0 : std::min<std::int64_t>(concurrency, prompts));
            const serve::ServeStats st = serve::summarize(sim, requests, serve::Slo{});
            for (const auto& [name, p] : {std::pair{"ttft_s", &st.ttft_s}, std::pair{"tpot_s", &st.tpot_s}, std::pair{"itl_s", &st.itl_s},
                                          std::pair{"e2e_s", &st.e2e_s}}) {
                predicted[std::string(name) + "_mean"] = p->mean;
                predicted[std::string(name) + "_p50"] = p->p50;
                predicted[std::string(name) + "_p99"] = p->p99;
            }
            predicted["output_tokens_per_s"] = st.output_tokens_per_s;
            predicted["requests_per_s"] = st.requests_per_s;
            id.gpu_memory_utilization = w.engine.gpu_memory_utilization;
            id.max_model_len = w.context_tokens;
            r.notes.push_back("simulated " + std::to_string(prompts) + " requests " +
                              (own.empty() ? "of " + std::to_string(in_tokens) + " input and " + std::to_string(out_tokens) + " output tokens (the run's means)"
                                           : std::string("with the file's own input and output lengths (input_lens, output_lens)")) +
                              (by_rate ? "" : " at concurrency " + std::to_string(concurrency)) + "; mean batch " +
                              std::to_string(sim.mean_batch).substr(0, 5) + ", " + std::to_string(sim.preemptions) + " preemptions");
        } else {
            r.unresolved.push_back("the model does not fit on " + gpu->id + " at TP " + std::to_string(id.tp) + ": " + a.reason +
                                   (id.tp == 1 ? "; pass --tp N" : ""));
        }
    }
    const auto logged = [&](const std::string& key) -> std::optional<LoggedQuantity> {
        const auto it = b.metrics.find(key);
        if (it == b.metrics.end()) return std::nullopt;
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.6g", it->second);
        return LoggedQuantity{it->second, buf, ""};
    };
    const auto prediction = [&](const std::string& key) -> std::optional<double> {
        const auto it = predicted.find(key);
        return it == predicted.end() ? std::nullopt : std::optional<double>(it->second);
    };
    for (const char* metric : {"ttft_s", "tpot_s", "itl_s", "e2e_s"})
        for (const char* stat : {"mean", "p50", "p99"}) {
            const std::string key = std::string(metric) + "_" + stat;
            add_row(r, key, logged(key), prediction(key), "s", note);
        }
    add_row(r, "output_tokens_per_s", logged("output_tokens_per_s"), prediction("output_tokens_per_s"), "tokens/s", note);
    add_row(r, "requests_per_s", logged("requests_per_s"), prediction("requests_per_s"), "requests/s", note);
    return r;
}

}  // namespace quantplan::check
