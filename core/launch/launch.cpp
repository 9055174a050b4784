#include "core/launch/launch.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <system_error>

#include "core/base/atomic_folder.h"
#include "core/base/error.h"
#include "core/base/json_guard.h"
#include "core/launch/json_fields.h"
#include "core/base/text_file.h"
#include "core/quant_methods/registry.h"

namespace quantplan::launch {
namespace fs = std::filesystem;

namespace {

using detail::string_field;
using detail::string_list;

std::string number_text(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", v);
    return buf;
}

// The leading dotted number of a registry snapshot's version text ("~v0.11.0 (by date...)",
// "v0.5.3", "main after 0.5.16"), as parts; empty when it has none.
std::vector<long> leading_version(const std::string& text) {
    std::vector<long> parts;
    std::size_t i = text.find_first_of("0123456789");
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
        long v = 0;
        while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) v = v * 10 + (text[i++] - '0');
        parts.push_back(v);
        if (i + 1 < text.size() && text[i] == '.' && std::isdigit(static_cast<unsigned char>(text[i + 1]))) ++i;
        else break;
    }
    return parts;
}

// The registry snapshot read closest below `version` (the oldest one for older versions).
const EngineSnapshot* registry_snapshot(const std::string& engine, const std::string& version) {
    const std::vector<long> asked = leading_version(version);
    const EngineSnapshot* best = nullptr;
    const EngineSnapshot* oldest = nullptr;
    for (const EngineSnapshot* s : builtin_engine_registry().complete()) {
        if (s->engine != engine) continue;
        if (!oldest) oldest = s;
        const std::vector<long> v = leading_version(s->version);
        if (!v.empty() && !(asked < v)) best = s;
    }
    return best ? best : oldest;
}

bool has(const std::vector<std::string>& list, const std::string& v) { return std::find(list.begin(), list.end(), v) != list.end(); }

// The choices of `flag` at version index v, or empty.
std::vector<std::string> choices_at(const EngineArgs& args, const std::string& flag, std::size_t v) {
    const ArgRange* r = args.find(flag, v);
    return r && r->kind == ArgKind::Choice ? r->choices : std::vector<std::string>{};
}

bool accepts(const EngineArgs& args, const std::string& flag, std::size_t v) { return args.find(flag, v) != nullptr; }

// The first of `flags` the version accepts, or "".
std::string first_flag(const EngineArgs& args, std::size_t v, std::initializer_list<const char*> flags) {
    for (const char* f : flags)
        if (accepts(args, f, v)) return f;
    return {};
}

std::string quote(const std::string& s) {
    if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@%+,") == std::string::npos) return s;
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

std::string yaml_string(const std::string& s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

// The llm-compressor quantization arguments of one tensor role.
std::string ct_args(const TensorQuant& q, bool activation, const std::string& indent) {
    const bool is_float = !dtype_is_integer(q.storage);
    std::ostringstream o;
    o << indent << "num_bits: " << dtype_bits(q.storage) << "\n";
    o << indent << "type: " << (is_float ? "float" : "int") << "\n";
    o << indent << "symmetric: " << (q.symmetric ? "true" : "false") << "\n";
    const GroupShape& g = q.scale->group;
    if (activation) {
        o << indent << "dynamic: " << (q.scale->is_static ? "false" : "true") << "\n";
        o << indent << "strategy: " << (g.is_per_group() ? "group" : q.scale->is_static ? "tensor" : "token") << "\n";
        if (g.is_per_group()) o << indent << "group_size: " << g.cols << "\n";
    } else if (g.is_block()) {
        o << indent << "strategy: block\n" << indent << "block_structure: [" << g.rows << ", " << g.cols << "]\n";
    } else if (g.is_per_group()) {
        o << indent << "strategy: group\n" << indent << "group_size: " << g.cols << "\n";
    } else if (g.is_per_row()) {
        o << indent << "strategy: channel\n";
    } else {
        o << indent << "strategy: tensor\n";
    }
    return o.str();
}

// The preset name llm-compressor gives the scheme, "" when none matches exactly.
std::string llmc_preset(const std::string& scheme) {
    static const std::map<std::string, std::string> presets = {
        {"w4a16-g128-sym", "W4A16"}, {"w8a16-int8", "W8A16"}, {"w8a8-int8", "W8A8"},
        {"w8a8-fp8", "FP8_DYNAMIC"}, {"w8a8-fp8-block128", "FP8_BLOCK"}, {"w4a4-nvfp4", "NVFP4"},
    };
    const auto it = presets.find(scheme);
    return it == presets.end() ? std::string() : it->second;
}

// The ignore list: what the scheme leaves in 16 bits that a Linear target would catch.
std::vector<std::string> ignore_list(const LaunchRequest& r) {
    std::vector<std::string> ignore;
    if (!r.scheme.covers.lm_head) ignore.push_back("lm_head");
    if (r.model.is_moe() && !r.scheme.covers.routers) {
        // The router of each MoE family, as its modules are named in transformers.
        if (r.model.model_type == "mixtral") ignore.push_back("re:.*block_sparse_moe\\.gate$");
        else if (r.model.model_type == "gpt_oss") ignore.push_back("re:.*mlp\\.router$");
        else ignore.push_back("re:.*mlp\\.gate$");
    }
    return ignore;
}

CheckpointPlan recipe_plan(const LaunchRequest& r, const std::string& output_dir) {
    CheckpointPlan c;
    c.kind = "recipe";
    c.repo = output_dir;
    c.output_dir = output_dir;
    const Scheme& s = r.scheme;
    const bool needs_data = s.is_weight_only() || (s.activations && s.activations->scale && s.activations->scale->is_static) ||
                            s.weights.storage == DType::Fp4E2M1 || (s.activations && dtype_is_integer(s.activations->storage));
    const std::vector<std::string> ignore = ignore_list(r);
    std::string ignore_text;
    for (const std::string& i : ignore) ignore_text += (ignore_text.empty() ? "" : ", ") + yaml_string(i);

    if (s.layout == CheckpointLayout::AutoAwqGemm) {
        // AutoAWQ's GEMM layout is what the plan's bytes count (qweight, qzeros, scales).
        c.tool = "AutoAWQ";
        c.recipe_file = "awq_config.json";
        c.recipe = "{\"zero_point\": " + std::string(s.weights.symmetric ? "false" : "true") + ", \"q_group_size\": " +
                   std::to_string(s.weights.scale->group.cols) + ", \"w_bit\": " + std::to_string(dtype_bits(s.weights.storage)) +
                   ", \"version\": \"GEMM\"}\n";
        c.calibration = "AutoAWQ's default calibration set (pile-val, 128 samples of 512 tokens) or your own traffic's text";
        c.notes.push_back("AutoAWQ writes the AutoAWQ GEMM layout the plan counted; llm-compressor's AWQModifier with scheme "
                          "W4A16_ASYM writes compressed-tensors instead (the same weights, packed differently)");
        return c;
    }
    if (s.layout == CheckpointLayout::Gptq) {
        c.tool = "GPTQModel";
        c.recipe_file = "quantize_config.json";
        c.recipe = "{\"bits\": " + std::to_string(dtype_bits(s.weights.storage)) + ", \"group_size\": " +
                   std::to_string(s.weights.scale->group.is_per_group() ? s.weights.scale->group.cols : -1) + ", \"sym\": " +
                   (s.weights.symmetric ? "true" : "false") + ", \"desc_act\": false}\n";
        c.calibration = "GPTQ needs calibration text: a few hundred samples (e.g. 512 of ultrachat_200k at 2048 tokens)";
        return c;
    }
    c.tool = "llm-compressor";
    c.recipe_file = "recipe.yaml";
    std::ostringstream y;
    const std::string preset = llmc_preset(r.scheme_name);
    y << "# " << r.scheme_name << " for " << r.model_repo << " (quantplan --emit; docs/launch.md)\n";
    if (!preset.empty()) y << "# the same as llm-compressor's preset scheme " << preset << "\n";
    y << "quant_stage:\n  quant_modifiers:\n";
    const bool int8_activations = s.activations && s.activations->storage == DType::Int8;
    if (int8_activations) y << "    SmoothQuantModifier:\n      smoothing_strength: 0.8\n";
    const std::string modifier = s.is_weight_only() && dtype_is_integer(s.weights.storage) ? "GPTQModifier"
                                 : int8_activations                                       ? "GPTQModifier"
                                                                                          : "QuantizationModifier";
    y << "    " << modifier << ":\n";
    y << "      ignore: [" << ignore_text << "]\n";
    y << "      config_groups:\n        group_0:\n          targets: [\"Linear\"]\n          weights:\n";
    y << ct_args(s.weights, false, "            ");
    if (s.activations && s.activations->scale) y << "          input_activations:\n" << ct_args(*s.activations, true, "            ");
    c.recipe = y.str();
    c.calibration = needs_data ? std::string("calibration text: 512 samples of 2048 tokens (llm-compressor's examples use "
                                             "HuggingFaceH4/ultrachat_200k; your own traffic is better)")
                               : std::string("none: weight scales come from the weights and activation scales are computed at run time");
    return c;
}

}  // namespace

std::vector<PublishedCheckpoint> parse_published_checkpoints(std::string_view json_text, const std::string& source) {
    const nlohmann::json j = parse_untrusted_json(json_text, source);
    const auto list = j.find("checkpoints");
    if (!j.is_object() || list == j.end() || !list->is_array()) throw Error(source + ".checkpoints", "must be a list");
    std::vector<PublishedCheckpoint> out;
    for (std::size_t i = 0; i < list->size(); ++i) {
        const std::string at = source + ".checkpoints[" + std::to_string(i) + "]";
        const nlohmann::json& c = (*list)[i];
        if (!c.is_object()) throw Error(at, "must be an object");
        PublishedCheckpoint p;
        p.model = string_field(c, "model", at);
        p.repo = string_field(c, "repo", at);
        p.publisher = string_field(c, "publisher", at, false);
        p.scheme = string_field(c, "scheme", at, false);
        p.source = string_field(c, "source", at);
        if (const auto q = c.find("quantization_config"); q != c.end() && q->is_object() && q->contains("quant_method") && (*q)["quant_method"].is_string())
            p.quant_method = (*q)["quant_method"].get<std::string>();
        out.push_back(std::move(p));
    }
    return out;
}

std::vector<PublishedCheckpoint> load_published_checkpoints(const fs::path& models_dir) {
    const fs::path file = models_dir / "quantized-checkpoints.json";
    std::error_code ec;
    if (!fs::is_regular_file(file, ec)) return {};
    return parse_published_checkpoints(read_text_file(file.string(), "models/quantized-checkpoints.json", 8u << 20), "models/quantized-checkpoints.json");
}

std::vector<EngineDeployment> parse_engine_deployments(std::string_view json_text, const std::string& source) {
    const nlohmann::json j = parse_untrusted_json(json_text, source);
    const auto list = j.find("engines");
    if (!j.is_object() || list == j.end() || !list->is_array()) throw Error(source + ".engines", "must be a list");
    std::vector<EngineDeployment> out;
    for (std::size_t i = 0; i < list->size(); ++i) {
        const std::string at = source + ".engines[" + std::to_string(i) + "]";
        const nlohmann::json& e = (*list)[i];
        if (!e.is_object()) throw Error(at, "must be an object");
        EngineDeployment d;
        d.engine = string_field(e, "engine", at);
        d.image = string_field(e, "image", at);
        d.tag = string_field(e, "tag", at);
        d.image_source = string_field(e, "image_source", at);
        if (!e.contains("port") || !e["port"].is_number_integer() || e["port"].get<int>() < 1 || e["port"].get<int>() > 65535)
            throw Error(at + ".port", "must be a port number");
        d.port = e["port"].get<int>();
        d.port_flag = string_field(e, "port_flag", at);
        d.host_flag = string_field(e, "host_flag", at, false);
        d.host_value = string_field(e, "host_value", at, false);
        d.docker_flags = string_list(e, "docker_flags", at);
        d.image_runs_server = e.value("image_runs_server", true);
        d.image_model_flag = e.value("image_model_flag", std::string("--model"));
        d.health_path = string_field(e, "health_path", at);
        d.readiness_initial_delay_s = e.value("readiness_initial_delay_s", 60);
        d.deployment_source = string_field(e, "deployment_source", at, false);
        out.push_back(std::move(d));
    }
    return out;
}

std::size_t resolve_args_version(const EngineArgs& args, const std::string& version) {
    if (version.empty()) return args.versions.size() - 1;
    if (const auto v = args.version_index(version)) return *v;
    throw Error("--engine", args.engine + "@" + version + " is not a release in " + args.source + " (" + args.versions_text() +
                                 "; pass one of them, e.g. " + args.engine + "@" + args.versions.back().version + ")");
}

std::string kubernetes_name(const std::string& text) {
    std::string out;
    for (char c : text) {
        const char l = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if ((l >= 'a' && l <= 'z') || (l >= '0' && l <= '9')) out += l;
        else if (!out.empty() && out.back() != '-') out += '-';
    }
    while (!out.empty() && out.back() == '-') out.pop_back();
    if (out.size() > 63) out.resize(63);
    while (!out.empty() && out.back() == '-') out.pop_back();
    return out.empty() ? std::string("quantplan") : out;
}

Launch make_launch(const LaunchRequest& r, const EngineArgs& args, const EngineDeployment& deployment,
                   const std::vector<PublishedCheckpoint>& published, const std::vector<GpuProfile>& gpus) {
    const std::size_t v = resolve_args_version(args, r.version);
    const std::string version = args.versions[v].version;
    const std::string engine_name = r.engine == "vllm" ? "vLLM" : r.engine == "sglang" ? "SGLang" : r.engine;
    const std::string at = engine_name + " " + version;
    const bool vllm = r.engine == "vllm";
    Launch l;
    l.engine = r.engine;
    l.version = version;
    l.replicas = r.replicas;
    l.gpus_per_replica = r.tensor_parallel * r.data_parallel;
    l.port = deployment.port;
    l.configuration = (r.pd_role.empty() ? std::string() : r.pd_role + " pool, ") + r.gpu.id + ", " + r.scheme_name + ", TP " +
                      std::to_string(r.tensor_parallel) + (r.data_parallel > 1 ? ", DP " + std::to_string(r.data_parallel) : "") + ", " +
                      std::to_string(r.replicas) + (r.replicas == 1 ? " replica" : " replicas");
    if (r.nodes > 1)
        throw Error("--emit", l.configuration + " spans " + std::to_string(r.nodes) +
                                  " nodes: multi-node launches (Ray, LeaderWorkerSet) are not generated yet; plan with --nodes 1");
    if (l.gpus_per_replica > 8)
        throw Error("--emit", l.configuration + " needs " + std::to_string(l.gpus_per_replica) + " GPUs per replica, more than one node holds");

    // The checkpoint, and what the engine does with it on this GPU.
    CheckpointPlan& c = l.checkpoint;
    c.bytes = r.checkpoint_bytes;
    const bool quantized = r.scheme.weights.is_quantized() && !r.scheme.native;
    const EngineSnapshot* snapshot = registry_snapshot(r.engine, version);
    if (!quantized) {
        c.kind = "model";
        c.repo = r.model_repo;
    } else {
        const auto pub = std::find_if(published.begin(), published.end(),
                                      [&](const PublishedCheckpoint& p) { return p.model == r.model_name && p.scheme == r.scheme_name; });
        if (pub != published.end()) {
            c.kind = "published";
            c.repo = pub->repo;
            c.source = pub->source;
        } else {
            c = recipe_plan(r, "./" + kubernetes_name(r.model_name.empty() ? r.model.name : r.model_name) + "-" + r.scheme_name);
            c.bytes = r.checkpoint_bytes;
        }
        // Activations in FP4 need FP4 tensor cores; no kernel runs them elsewhere.
        if (r.scheme.activations && r.scheme.activations->storage == DType::Fp4E2M1 && !(r.gpu.peak.fp4_flop_per_s > 0)) {
            std::string serving;
            for (const GpuProfile& g : gpus)
                if (g.peak.fp4_flop_per_s > 0) serving += (serving.empty() ? "" : ", ") + g.id;
            throw Error("--emit", r.scheme_name + " on " + r.gpu.id + ": no " + at +
                                      " kernel runs FP4 activations without FP4 tensor cores (compute capability 10.0 on); GPUs that serve it: " +
                                      (serving.empty() ? std::string("none bundled") : serving));
        }
        if (snapshot) {
            if (const auto q = engine_query_for_scheme(r.scheme)) {
                const EngineResolution res = resolve_engine(*snapshot, *q, engine_gpu(r.gpu));
                if (res.refused || !res.errors.empty()) {
                    std::string serving;
                    for (const GpuProfile& g : gpus) {
                        const EngineResolution other = resolve_engine(*snapshot, *q, engine_gpu(g));
                        if (!other.refused && other.errors.empty()) serving += (serving.empty() ? "" : ", ") + g.id;
                    }
                    throw Error("--emit", r.scheme_name + " on " + r.gpu.id + ": " + at + " refuses it (" +
                                              (res.errors.empty() ? std::string("registry ") + snapshot->id : res.errors.front()) +
                                              "); GPUs that serve it: " + (serving.empty() ? std::string("none bundled") : serving));
                }
                c.kernel = res.kernel;
                // Pin the method the plan assumed where the version's --quantization offers it; the
                // engine reads the checkpoint's own quantization_config otherwise.
                const std::string method = res.resolved_method.empty() ? q->method : res.resolved_method;
                if (has(choices_at(args, "--quantization", v), method)) c.quantization = method;
                else c.notes.push_back("--quantization left out: " + at + "'s choices do not list '" + method +
                                       "'; the engine reads the checkpoint's quantization_config");
                if (snapshot->version.find(version) == std::string::npos)
                    c.notes.push_back("kernel from the registry read at " + snapshot->stamp() + ", the snapshot nearest below " + version);
            }
        }
        if (r.scheme_name == "w8a8-fp8" && vllm)
            c.notes.push_back("vLLM can also quantize the 16-bit checkpoint at load (--quantization fp8), with one scale per "
                              "weight tensor rather than this scheme's per-channel scales");
    }

    // The KV-cache dtype the plan assumed.
    std::string kv_choice;
    if (!r.kv_auto) {
        std::vector<std::string> wanted;
        if (snapshot) {
            const auto it = snapshot->kv_cache_formats.find(r.kv_format);
            if (it != snapshot->kv_cache_formats.end()) wanted = it->second;
        }
        if (wanted.empty()) wanted = {r.kv_format};
        const std::vector<std::string> offered = choices_at(args, "--kv-cache-dtype", v);
        for (const std::string& w : wanted)
            if (has(offered, w)) {
                kv_choice = w;
                break;
            }
        if (kv_choice.empty()) {
            std::optional<std::size_t> first;
            for (const std::string& w : wanted)
                if (const auto f = args.first_accepting("--kv-cache-dtype", w); f && (!first || *f < *first)) first = f;
            throw Error("--emit", "a " + r.kv_format + " KV cache: " + at + "'s --kv-cache-dtype does not offer it" +
                                      (first && *first > v ? "; first offered in " + engine_name + " " + args.versions[*first].version
                                                           : std::string("; no release in the data offers it")));
        }
    }

    // The command.
    const Entrypoint* entry = args.entrypoint(v);
    if (!entry) throw Error("--emit", at + ": the argument data names no entry point");
    std::vector<std::string> opts;
    const auto add = [&](const std::string& flag_in, const std::string& value, const std::string& why) {
        // An option the plan needs that this release does not have (data or expert parallelism
        // before the engine had them): one line naming the first release that has it.
        const std::string& flag = flag_in.empty() ? std::string("(no option)") : flag_in;
        if (!accepts(args, flag, v)) {
            std::optional<std::size_t> first;
            for (std::size_t i = 0; i < args.versions.size() && !first; ++i)
                if (accepts(args, flag, i)) first = i;
            throw Error("--emit", at + " has no " + flag + " (" + why + ")" +
                                      (first && *first > v ? "; first offered in " + engine_name + " " + args.versions[*first].version
                                                           : std::string("; no release in the data offers it")));
        }
        opts.push_back(flag);
        if (!value.empty()) opts.push_back(value);
        l.settings_from_plan.push_back(flag + (value.empty() ? "" : " " + value) + ": " + why);
    };
    if (!c.quantization.empty()) add("--quantization", c.quantization, "the kernel the plan priced (" + (c.kernel.empty() ? std::string("kernel unknown") : c.kernel) + ")");
    if (!kv_choice.empty()) add("--kv-cache-dtype", kv_choice, "the plan's " + r.kv_format + " KV cache");
    const std::string tp_flag = vllm ? "--tensor-parallel-size" : first_flag(args, v, {"--tp-size", "--tensor-parallel-size"});
    add(tp_flag, std::to_string(r.tensor_parallel), "the plan's tensor-parallel degree");
    if (r.data_parallel > 1) {
        const std::string dp_flag = vllm ? "--data-parallel-size" : first_flag(args, v, {"--dp-size", "--data-parallel-size"});
        add(dp_flag, std::to_string(r.data_parallel), "data-parallel attention engines sharing the experts");
        if (!vllm) add("--enable-dp-attention", "", "SGLang's data-parallel attention");
    }
    if (r.expert_parallel) {
        if (vllm) {
            add("--enable-expert-parallel", "", "whole experts per GPU (expert parallel)");
        } else if (accepts(args, "--ep-size", v)) {
            add("--ep-size", std::to_string(r.tensor_parallel * r.data_parallel), "whole experts per GPU (expert parallel)");
        } else if (accepts(args, "--enable-ep-moe", v)) {
            add("--enable-ep-moe", "", "whole experts per GPU (expert parallel)");
        } else {
            throw Error("--emit", at + " has no expert-parallel option; plan without --ep");
        }
    }
    add(vllm ? "--max-model-len" : "--context-length", std::to_string(r.max_model_len), "the longest request the plan admits");
    if (vllm) {
        add("--gpu-memory-utilization", number_text(r.gpu_memory_utilization), "the memory budget the plan's KV cache comes from");
    } else {
        const double f = r.mem_fraction_static > 0 ? r.mem_fraction_static : r.gpu_memory_utilization;
        add("--mem-fraction-static", number_text(f), "the memory budget the plan's KV cache comes from");
    }
    add(vllm ? "--max-num-seqs" : "--max-running-requests", std::to_string(r.max_num_seqs), "the most sequences the plan batches");
    add(vllm ? "--max-num-batched-tokens" : "--chunked-prefill-size", std::to_string(r.max_num_batched_tokens),
        "the prefill chunk the plan's steps take");
    if (r.prefix_caching) {
        if (vllm) add("--enable-prefix-caching", "", "the plan counts the shared prefix as cached");
        else l.notes.push_back("SGLang's radix cache (on by default) serves the shared prefix the plan counts as cached");
    }
    if (r.enforce_eager) add(vllm ? "--enforce-eager" : "--disable-cuda-graph", "", "the plan priced steps without CUDA graphs");
    if (r.num_scheduler_steps > 1) {
        if (!vllm) throw Error("--emit", "multi-step scheduling (--num-scheduler-steps) is vLLM V0's; SGLang has none");
        add("--num-scheduler-steps", std::to_string(r.num_scheduler_steps), "the plan priced vLLM V0's multi-step scheduling at this many steps");
    }
    if (!r.pd_role.empty()) {
        // A pool of disaggregated serving: its side of the KV transfer, as the plan priced it.
        if (r.pd_role != "prefill" && r.pd_role != "decode") throw Error("--emit", "a pool is prefill or decode, not '" + r.pd_role + "'");
        const auto since = [&](const std::string& first, const std::string& what) {
            // The first release whose source has the connector (checked in the release archives:
            // vllm/distributed/kv_transfer/kv_connector/v1/ and its factory's registration).
            const std::optional<std::size_t> i = args.version_index(first);
            if (i && v < *i) throw Error("--emit", at + " has no " + what + "; first in " + engine_name + " " + first);
        };
        if (vllm) {
            std::string json;
            if (r.pd_connector == "nixl") {
                since("0.9.0", "NixlConnector");
                json = R"({"kv_connector":"NixlConnector","kv_role":"kv_both"})";
            } else if (r.pd_connector == "p2p-nccl") {
                since("0.9.2", "P2pNcclConnector");
                json = std::string(R"({"kv_connector":"P2pNcclConnector","kv_role":")") + (r.pd_role == "prefill" ? "kv_producer" : "kv_consumer") + R"("})";
            } else if (r.pd_connector == "mooncake") {
                // Not emitted: the release that first ships the in-tree MooncakeConnector (vLLM PR
                // 24718) is not pinned here, and before it the connector came from Mooncake's wheel.
                throw Error("--emit", "vLLM servers are emitted for the nixl and p2p-nccl connectors, not 'mooncake' (its first vLLM release is not "
                                      "pinned here: set --kv-transfer-config '{\"kv_connector\":\"MooncakeConnector\",\"kv_role\":\"kv_producer\"}' "
                                      "(kv_consumer on the decode pool) by hand)");
            } else {
                throw Error("--emit", "vLLM servers are emitted for the nixl and p2p-nccl connectors, not '" + r.pd_connector +
                                          "' (NVIDIA Dynamo and SGLang launch their own workers)");
            }
            add("--kv-transfer-config", json, "the " + r.pd_role + " pool's side of the KV transfer (" + r.pd_connector + ")");
            l.notes.push_back("a proxy in front sends each request to a prefill server (max_tokens 1), then to a decode server with the returned "
                              "kv_transfer_params (vLLM's disaggregated-serving proxy example, or llm-d's routing sidecar)");
        } else {
            if (!r.pd_connector.empty() && r.pd_connector != "sglang")
                throw Error("--emit", "SGLang servers are emitted for SGLang's own PD transfer (--kv-connector sglang), not '" + r.pd_connector + "'");
            add("--disaggregation-mode", r.pd_role, "this server is the " + r.pd_role + " pool of the disaggregated plan");
            add("--disaggregation-transfer-backend", "mooncake", "the KV transfer the plan priced (SGLang's default backend)");
            l.notes.push_back("SGLang's router sends each request to a prefill and a decode server together (sglang_router in PD mode, or "
                              "sglang.srt.disaggregation.mini_lb in the releases that ship it)");
        }
    }
    if (r.mxfp4_mxfp8) {
        if (!vllm) throw Error("--emit", "--mxfp4-mxfp8 is priced as vLLM runs it; SGLang has no such switch in the data");
        l.env["VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8"] = "1";
        l.settings_from_plan.push_back("VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8=1: MXFP4 experts with MXFP8 activations, as the plan priced them");
    }

    l.argv = entry->argv;
    if (entry->model_flag.empty()) l.argv.push_back(c.repo);
    else l.argv.insert(l.argv.end(), {entry->model_flag, c.repo});
    l.argv.insert(l.argv.end(), opts.begin(), opts.end());

    // In the container: after the image when its entry point is the server (the model by its
    // option), else the whole command; both listen on the deployment's host and port.
    // A checkpoint made here (a recipe's output folder, or a config given by path) is not in the
    // image: the container reads it from a mount at /models/<folder>.
    l.container_runs_server = deployment.image_runs_server;
    std::string container_model = c.repo;
    if (c.repo.rfind("./", 0) == 0 || c.repo.rfind("/", 0) == 0) {
        const std::string folder = std::filesystem::path(c.repo).lexically_normal().filename().string();
        container_model = "/models/" + folder;
        l.model_mount = {c.repo, container_model};
    }
    if (deployment.image_runs_server) {
        l.container_args = {deployment.image_model_flag, container_model};
        l.container_args.insert(l.container_args.end(), opts.begin(), opts.end());
    } else {
        l.container_args = l.argv;
        for (std::string& a : l.container_args)
            if (a == c.repo) a = container_model;
    }
    if (!deployment.host_flag.empty()) l.container_args.insert(l.container_args.end(), {deployment.host_flag, deployment.host_value});
    l.container_args.insert(l.container_args.end(), {deployment.port_flag, std::to_string(deployment.port)});

    // Every option, as launched bare and in the container, through the version's parser data.
    std::vector<std::string> bare = opts;
    if (!entry->model_flag.empty()) bare.insert(bare.begin(), {entry->model_flag, c.repo});
    std::vector<std::string> problems = check_arguments(args, v, bare);
    std::vector<std::string> in_container = l.container_args;
    if (!deployment.image_runs_server)
        in_container.erase(in_container.begin(), in_container.begin() + static_cast<std::ptrdiff_t>(entry->argv.size() + (entry->model_flag.empty() ? 1 : 0)));
    for (const std::string& p : check_arguments(args, v, in_container)) problems.push_back(p);
    if (!problems.empty()) throw Error("--emit", problems.front() + " (" + args.source + ")");

    l.image = deployment.image + ":" + [&] {
        std::string tag = deployment.tag;
        if (const std::size_t p = tag.find("{version}"); p != std::string::npos) tag.replace(p, 9, version);
        return tag;
    }();
    const HealthEndpoint* h = args.health_endpoint(v);
    l.health_path = h ? h->path : deployment.health_path;
    return l;
}

std::string shell_command(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env) {
    std::string out;
    for (const auto& [k, val] : env) out += k + "=" + quote(val) + " ";
    std::size_t i = 0;
    // The entry point and the model on the first line, then one option (and its value) a line.
    for (; i < argv.size() && (i < 2 || argv[i].rfind("-", 0) != 0); ++i) out += (i ? " " : "") + quote(argv[i]);
    while (i < argv.size()) {
        out += " \\\n    " + quote(argv[i++]);
        while (i < argv.size() && argv[i].rfind("--", 0) != 0) out += " " + quote(argv[i++]);
    }
    return out + "\n";
}

std::string docker_run(const Launch& l, const EngineDeployment& d) {
    // The deployment's own flags are shell text from the data (a "$HOME" in a volume stays
    // unquoted so the shell expands it); everything else is quoted.
    std::string out = "docker run";
    for (const std::string& f : d.docker_flags) out += (f.rfind("-", 0) == 0 ? " \\\n    " : " ") + f;
    if (l.model_mount) {
        const std::string host = l.model_mount->first.rfind("./", 0) == 0 ? "\"$PWD/" + l.model_mount->first.substr(2) + "\""
                                                                         : quote(l.model_mount->first);
        out += " \\\n    -v " + host + ":" + l.model_mount->second + ":ro";
    }
    out += " \\\n    --gpus " + std::to_string(l.gpus_per_replica);
    for (const auto& [k, val] : l.env) out += " \\\n    --env " + quote(k + "=" + val);
    out += " \\\n    -p " + std::to_string(d.port) + ":" + std::to_string(d.port) + " \\\n    " + quote(l.image);
    for (std::size_t i = 0; i < l.container_args.size(); ++i) {
        const bool option = l.container_args[i].rfind("--", 0) == 0;
        out += (option ? " \\\n    " : " ") + quote(l.container_args[i]);
    }
    return out + "\n";
}

std::string kubernetes_yaml(const Launch& l, const std::string& name_in) {
    const std::string name = kubernetes_name(name_in);
    std::ostringstream y;
    y << "# " << l.configuration << " on " << (l.engine == "vllm" ? "vLLM " : "SGLang ") << l.version << " (quantplan --emit)\n";
    if (l.model_mount)
        y << "# the checkpoint " << l.model_mount->first << " is not in the image: put it on a volume and mount it at "
          << l.model_mount->second << " (add the volume to this pod spec)\n";
    y << "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: " << name << "\n  labels:\n    app: " << name << "\n";
    y << "spec:\n  replicas: " << l.replicas << "\n  selector:\n    matchLabels:\n      app: " << name << "\n";
    y << "  template:\n    metadata:\n      labels:\n        app: " << name << "\n    spec:\n      containers:\n";
    y << "        - name: " << (l.engine == "vllm" ? "vllm" : "sglang") << "\n          image: " << l.image << "\n";
    y << (l.container_runs_server ? "          args:\n" : "          command:\n");
    for (const std::string& a : l.container_args) y << "            - " << yaml_string(a) << "\n";
    y << "          ports:\n            - containerPort: " << l.port << "\n";
    if (!l.env.empty()) {
        y << "          env:\n";
        for (const auto& [k, val] : l.env) y << "            - name: " << k << "\n              value: " << yaml_string(val) << "\n";
    }
    y << "          resources:\n            limits:\n              nvidia.com/gpu: " << l.gpus_per_replica << "\n";
    y << "          readinessProbe:\n            httpGet:\n              path: " << l.health_path << "\n              port: " << l.port << "\n";
    y << "            initialDelaySeconds: 60\n            periodSeconds: 10\n";
    y << "          volumeMounts:\n            - name: dshm\n              mountPath: /dev/shm\n";
    y << "      volumes:\n        - name: dshm\n          emptyDir:\n            medium: Memory\n";
    y << "---\napiVersion: v1\nkind: Service\nmetadata:\n  name: " << name << "\nspec:\n  selector:\n    app: " << name << "\n";
    y << "  ports:\n    - port: " << l.port << "\n      targetPort: " << l.port << "\n";
    return y.str();
}

nlohmann::json launch_json(const Launch& l) {
    nlohmann::json checkpoint = {{"kind", l.checkpoint.kind}, {"repo", l.checkpoint.repo}, {"bytes", l.checkpoint.bytes}};
    if (!l.checkpoint.source.empty()) checkpoint["source"] = l.checkpoint.source;
    if (!l.checkpoint.quantization.empty()) checkpoint["quantization"] = l.checkpoint.quantization;
    if (!l.checkpoint.kernel.empty()) checkpoint["kernel"] = l.checkpoint.kernel;
    if (l.checkpoint.kind == "recipe")
        checkpoint["recipe"] = {{"tool", l.checkpoint.tool}, {"file", l.checkpoint.recipe_file}, {"text", l.checkpoint.recipe},
                                {"calibration", l.checkpoint.calibration}, {"output_dir", l.checkpoint.output_dir}};
    checkpoint["notes"] = l.checkpoint.notes;
    if (l.model_mount) checkpoint["container_path"] = l.model_mount->second;
    return {{"engine", l.engine},
            {"version", l.version},
            {"argv", l.argv},
            {"env", l.env},
            {"image", l.image},
            {"configuration", l.configuration},
            {"gpus_per_replica", l.gpus_per_replica},
            {"replicas", l.replicas},
            {"health_path", l.health_path},
            {"port", l.port},
            {"settings_from_plan", l.settings_from_plan},
            {"checkpoint", checkpoint},
            {"notes", l.notes}};
}

void write_emit_folder(const fs::path& dir_in, const std::vector<Launch>& launches, const EngineDeployment& deployment) {
    fs::path dir = dir_in.lexically_normal();
    if (!dir.has_filename() && dir.has_parent_path() && dir != dir.root_path()) dir = dir.parent_path();
    if (dir.empty() || dir.filename() == "." || dir.filename() == "..")
        throw Error("--emit-out", "'" + dir_in.string() + "' does not name a folder");
    std::error_code ec;
    const fs::file_status st = fs::symlink_status(dir, ec);
    if (fs::exists(st)) {
        if (fs::is_symlink(st) || !fs::is_directory(st)) throw Error("--emit-out", "'" + dir.string() + "' exists and is not a folder");
        const bool empty = fs::is_empty(dir, ec);
        bool ours = false;
        if (!empty) {
            try {
                const nlohmann::json j = parse_untrusted_json(read_text_file((dir / "launch.json").string(), "launch.json", 16u << 20), "launch.json");
                ours = j.is_object() && j.value("format", "") == "quantplan-launch/1";
            } catch (const Error&) {
                ours = false;
            }
        }
        if (!empty && !ours)
            throw Error("--emit-out", "'" + dir.string() + "' holds files that are not quantplan launch files (no launch.json); choose a new or empty folder");
    }
    std::vector<FolderFile> files;
    nlohmann::json index = {{"format", "quantplan-launch/1"}, {"launches", nlohmann::json::array()}};
    for (std::size_t i = 0; i < launches.size(); ++i) {
        const Launch& l = launches[i];
        const std::string sub = std::to_string(i + 1) + "-" + kubernetes_name(l.configuration);
        files.push_back({sub + "/launch.sh", "#!/bin/sh\n# " + l.configuration + " (quantplan --emit)\n" + shell_command(l.argv, l.env)});
        files.push_back({sub + "/docker-run.sh", "#!/bin/sh\n" + docker_run(l, deployment)});
        files.push_back({sub + "/deployment.yaml", kubernetes_yaml(l, sub)});
        if (l.checkpoint.kind == "recipe") files.push_back({sub + "/" + l.checkpoint.recipe_file, l.checkpoint.recipe});
        nlohmann::json j = launch_json(l);
        j["folder"] = sub;
        index["launches"].push_back(j);
    }
    files.push_back({"launch.json", index.dump(2) + "\n"});
    write_folder_atomically(dir, files);
}

}  // namespace quantplan::launch
