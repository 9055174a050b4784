#include "core/fidelity/fit.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <set>

#include <Eigen/Dense>

#include "core/base/error.h"
#include "core/base/stats.h"
#include "core/checkpoint/model_config_json.h"
#include "core/engine/step_model.h"
#include "core/roofline/roofline.h"

namespace quantplan::fidelity {
namespace {

using engine::EngineCatalog;
using engine::EngineProfile;
using engine::EngineSetup;
using engine::FigureClass;
using engine::family_matmul;
using engine::KernelFamily;

double d(std::int64_t v) { return static_cast<double>(v); }
double d(std::uint64_t v) { return static_cast<double>(v); }


// Non-negative least squares min |A x - c| over x >= 0 (Lawson and Hanson's active-set method;
// a handful of unknowns).
std::vector<double> nnls(const std::vector<std::vector<double>>& rows, const std::vector<double>& c) {
    const std::size_t n = rows.empty() ? 0 : rows.front().size();
    // Lawson-Hanson on the normal equations: the gradient A'(b - Ax) = A'b - A'A x and every
    // passive-set solve only need the n x n matrix A'A and the vector A'b, formed once.
    const auto N = static_cast<Eigen::Index>(n);
    Eigen::MatrixXd AtA = Eigen::MatrixXd::Zero(N, N);
    Eigen::VectorXd Atb = Eigen::VectorXd::Zero(N);
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const Eigen::Map<const Eigen::VectorXd> a(rows[i].data(), N);
        AtA.selfadjointView<Eigen::Lower>().rankUpdate(a);
        Atb += c[i] * a;
    }
    AtA = AtA.selfadjointView<Eigen::Lower>();
    Eigen::VectorXd x = Eigen::VectorXd::Zero(N);
    std::vector<bool> passive(n, false);
    for (int outer = 0; outer < 3 * static_cast<int>(n) + 10; ++outer) {
        const Eigen::VectorXd w = Atb - AtA * x;
        Eigen::Index best = -1;
        double best_w = 1e-12;
        for (std::size_t j = 0; j < n; ++j)
            if (!passive[j] && w(static_cast<Eigen::Index>(j)) > best_w) best_w = w(static_cast<Eigen::Index>(j)), best = static_cast<Eigen::Index>(j);
        if (best < 0) break;
        passive[static_cast<std::size_t>(best)] = true;
        for (int inner = 0; inner < 3 * static_cast<int>(n) + 10; ++inner) {
            std::vector<Eigen::Index> cols;
            for (std::size_t j = 0; j < n; ++j)
                if (passive[j]) cols.push_back(static_cast<Eigen::Index>(j));
            const auto P = static_cast<Eigen::Index>(cols.size());
            Eigen::MatrixXd Mp(P, P);
            Eigen::VectorXd bp(P);
            for (Eigen::Index r = 0; r < P; ++r) {
                bp(r) = Atb(cols[static_cast<std::size_t>(r)]);
                for (Eigen::Index k = 0; k < P; ++k) Mp(r, k) = AtA(cols[static_cast<std::size_t>(r)], cols[static_cast<std::size_t>(k)]);
            }
            const Eigen::VectorXd zp = Mp.colPivHouseholderQr().solve(bp);
            Eigen::VectorXd z = Eigen::VectorXd::Zero(N);
            for (std::size_t k = 0; k < cols.size(); ++k) z(cols[k]) = zp(static_cast<Eigen::Index>(k));
            bool feasible = true;
            for (Eigen::Index j : cols) feasible = feasible && z(j) > 0;
            if (feasible) {
                x = z;
                break;
            }
            double alpha = 1.0;
            for (Eigen::Index j : cols)
                if (z(j) <= 0) alpha = std::min(alpha, x(j) / (x(j) - z(j)));
            x += alpha * (z - x);
            for (Eigen::Index j : cols)
                if (x(j) <= 1e-15) passive[static_cast<std::size_t>(j)] = false, x(j) = 0;
        }
    }
    return std::vector<double>(x.data(), x.data() + x.size());
}

// Bytes per stored weight of a kernel family's weight operand.
double weight_bytes_per_element(KernelFamily f) {
    switch (f) {
        case KernelFamily::Bf16Gemm:
        case KernelFamily::GenericDequant: return 2.0;
        case KernelFamily::W4A16: return 0.5;
        default: return 1.0;
    }
}

const GpuProfile* find_gpu(const std::vector<GpuProfile>& gpus, const std::string& id) {
    for (const GpuProfile& g : gpus)
        if (g.id == id) return &g;
    return nullptr;
}

// ---------------------------------------------------------------------------------------------
// Kernel curves.

struct KernelSample {
    std::string gpu;
    std::string arch;
    KernelFamily family;
    std::int64_t m;
    double fraction;           // GEMM: roofline / measured
    double bytes;              // attention: bytes read; measured seconds in `time_s`
    double time_s;
    std::string engine;
    std::string origin;        // which measurements: "aiconfigurator-core kernel tables", "humming benchmark runs"
};

// The measurements a kernel record belongs to, named by its corpus folder.
std::string kernel_origin(const std::string& file) {
    const std::string folder = std::filesystem::path(file).parent_path().filename().string();
    if (folder == "aiconfigurator") return "aiconfigurator-core kernel tables";
    if (folder == "humming") return "humming benchmark runs";
    return std::filesystem::path(file).stem().string();
}

std::vector<KernelSample> kernel_samples(const Corpus& corpus, const FitInputs& in) {
    std::vector<KernelSample> out;
    for (const Record& r : corpus.records) {
        if (r.metric != Metric::KernelTimeS || r.value <= 0) continue;
        const GpuProfile* gpu = find_gpu(in.gpus, r.setup.gpu);
        if (!gpu) continue;
        const RecordSetup& s = r.setup;
        if (s.op == "gemm" && s.m && s.n && s.k) {
            KernelFamily f;
            try {
                f = engine::parse_kernel_family(s.kernel_family, r.id);
            } catch (const Error&) {
                continue;  // a family the step model does not price (nvfp4)
            }
            // The tables time per-channel FP8 (CUTLASS, sgl-kernel) and 128x128 block-scaled FP8
            // (DeepGEMM, FlashInfer, Triton) under one family name; they are different kernels,
            // ten times apart at M = 8 on a B200 (aic/b200/vllm/gemm: 18.9 us against 177 us for
            // n = k = 8192), so each prices its own schemes.
            if (f == KernelFamily::Fp8W8A8 && s.gemm_dtype == "fp8_block") f = KernelFamily::Fp8BlockW8A8;
            const double bytes = d(*s.n) * d(*s.k) * weight_bytes_per_element(f) + 2.0 * d(*s.m) * (d(*s.k) + d(*s.n));
            const double flop = 2.0 * d(*s.m) * d(*s.n) * d(*s.k);
            const double peak = matmul_peak_flop_per_s(*gpu, family_matmul(f));
            if (peak <= 0) continue;
            const double roofline = std::max(bytes / gpu->memory_bandwidth_bytes_per_s, flop / peak);
            out.push_back({gpu->id, gpu->compute_capability, f, *s.m, std::min(1.5, roofline / r.value), bytes, r.value, s.engine, kernel_origin(r.file)});
        } else if (s.op == "moe" && (s.kernel_family == "w4a16" || s.kernel_family == "w4a16_mxfp4") && s.num_tokens && s.hidden_size &&
                   s.inter_size && s.topk && s.num_experts && s.moe_ep_size == 1 && s.moe_tp_size == 1 && s.distribution == "balanced") {
            // A fused-MoE call with every expert on this GPU (expert parallelism 1, as TP serving
            // keeps them): the weights of the experts the tokens reach, read once; both GEMMs'
            // FLOPs for every (token, expert) pair. Its M is the rows each expert sees. Marlin's
            // int4 weights are half a byte each with their group scales; MXFP4's are 4 bits plus one
            // e8m0 scale byte per 32 (4.25 bits).
            const bool mxfp4 = s.kernel_family == "w4a16_mxfp4";
            const double pairs = d(*s.num_tokens) * d(*s.topk);
            const double active = std::min(d(*s.num_experts), pairs);
            const double per_expert = 3.0 * d(*s.hidden_size) * d(*s.inter_size);  // gate, up and down
            const double weight_bytes = mxfp4 ? 4.25 / 8.0 : weight_bytes_per_element(KernelFamily::W4A16);
            const double bytes = active * per_expert * weight_bytes + 2.0 * pairs * (2.0 * d(*s.hidden_size) + 3.0 * d(*s.inter_size));
            const double flop = 2.0 * pairs * per_expert;
            const double peak = matmul_peak_flop_per_s(*gpu, MatmulType::Bf16);
            if (peak <= 0) continue;
            const double roofline = std::max(bytes / gpu->memory_bandwidth_bytes_per_s, flop / peak);
            const auto rows = std::max<std::int64_t>(1, std::llround(pairs / d(*s.num_experts)));
            out.push_back({gpu->id, gpu->compute_capability, mxfp4 ? KernelFamily::Mxfp4Moe : KernelFamily::W4A16Moe, rows,
                           std::min(1.5, roofline / r.value), bytes, r.value, s.engine, kernel_origin(r.file)});
        } else if (s.op == "generation_attention" && s.batch && s.kv_len && s.num_kv_heads && s.head_dim) {
            const bool fp8 = s.kv_cache_dtype.find("fp8") != std::string::npos;
            const double bytes = d(*s.batch) * d(*s.kv_len) * 2.0 * d(*s.num_kv_heads) * d(*s.head_dim) * (fp8 ? 1.0 : 2.0);
            out.push_back({gpu->id, gpu->compute_capability, fp8 ? KernelFamily::AttentionFp8 : KernelFamily::AttentionBf16, *s.batch, 0.0,
                           bytes, r.value, s.engine, kernel_origin(r.file)});
        }
    }
    return out;
}

// A GEMM curve: the median fraction at each M over the samples given.
engine::EfficiencyCurve gemm_curve(const std::vector<const KernelSample*>& samples, const std::string& basis) {
    std::map<std::int64_t, std::vector<double>> by_m;
    for (const KernelSample* s : samples) by_m[s->m].push_back(s->fraction);
    engine::EfficiencyCurve c;
    for (const auto& [m, fractions] : by_m) {
        c.m.push_back(m);
        c.fraction.push_back(std::clamp(quantile(fractions, 0.5), 1e-3, 1.5));
    }
    c.measured_points = static_cast<std::int64_t>(samples.size());
    c.basis = basis;
    return c;
}

// An attention line: time = per_call_s + bytes / (bandwidth x fraction), least squares (relative).
engine::EfficiencyCurve attention_curve(const std::vector<const KernelSample*>& samples, const std::vector<GpuProfile>& gpus,
                                        const std::string& basis) {
    std::vector<std::vector<double>> rows;
    for (const KernelSample* s : samples) {
        const GpuProfile* g = find_gpu(gpus, s->gpu);
        const double roofline = s->bytes / g->memory_bandwidth_bytes_per_s;
        rows.push_back({1.0 / s->time_s, roofline / s->time_s});
    }
    const std::vector<double> x = nnls(rows, std::vector<double>(rows.size(), 1.0));
    const double per_call = x[0], inverse_fraction = x[1];
    engine::EfficiencyCurve curve;
    curve.m = {1};
    curve.fraction = {std::clamp(inverse_fraction > 0 ? 1.0 / inverse_fraction : 1.0, 1e-3, 1.5)};
    curve.per_call_s = per_call;
    curve.measured_points = static_cast<std::int64_t>(samples.size());
    curve.basis = basis;
    return curve;
}

engine::KernelEfficiencies fit_kernels(const std::vector<KernelSample>& samples, const FitInputs& in) {
    engine::KernelEfficiencies k;
    std::map<std::pair<std::string, KernelFamily>, std::vector<const KernelSample*>> by_gpu, by_arch;
    std::map<KernelFamily, std::vector<const KernelSample*>> any;
    for (const KernelSample& s : samples) {
        by_gpu[{s.gpu, s.family}].push_back(&s);
        by_arch[{s.arch, s.family}].push_back(&s);
        any[s.family].push_back(&s);
    }
    const auto make = [&](const std::vector<const KernelSample*>& v, KernelFamily f, const std::string& where) {
        std::set<std::string> engines, origins;
        for (const KernelSample* s : v) engines.insert(s->engine), origins.insert(s->origin);
        std::string basis;
        for (const std::string& o : origins) basis += (basis.empty() ? "" : " and ") + o;
        basis += ", " + where + ", " + std::to_string(v.size()) + " points (";
        for (auto it = engines.begin(); it != engines.end(); ++it) basis += (it == engines.begin() ? "" : ", ") + *it;
        basis += ")";
        return f == KernelFamily::AttentionBf16 || f == KernelFamily::AttentionFp8 ? attention_curve(v, in.gpus, basis) : gemm_curve(v, basis);
    };
    for (const auto& [key, v] : by_gpu) k.by_gpu[key.first][key.second] = make(v, key.second, key.first);
    for (const auto& [key, v] : by_arch) k.by_arch[key.first][key.second] = make(v, key.second, key.first);
    for (const auto& [f, v] : any) k.any_gpu[f] = make(v, f, "every GPU measured");
    return k;
}

// ---------------------------------------------------------------------------------------------
// End-to-end points: each priced once as base + n_fixed x fixed_step_s + n_layer x per_layer_s
// (times) or as a KV budget linear in the memory terms.

struct Resolved {
    ModelConfig model;
    GpuProfile gpu;
    Scheme scheme;
    KvFormat kv;
    const EngineProfile* profile = nullptr;
    Workload w;
    SchemeCosts costs;
    engine::EngineDefaults defaults;  // the profile's defaults on this GPU at this max_model_len
    std::string note;
};

struct Point {
    PricedPoint out;
    // Times: predicted seconds = s_decode x decode_s + s_prefill x prefill_s + fixed_count x fixed
    // + layer_count x per_layer, with the kernel scales s of kernel_key and kernel_key + "/prefill".
    double decode_s = 0, prefill_s = 0, fixed_count = 0, layer_count = 0, measured_s = 0;
    double eager_layer_count = 0;  // layers x decode steps launched without CUDA graphs
    // Those steps' host term: how many, their unscaled GPU time each (kernels and communication at
    // the run's middle context) and the layers the host launches per step.
    double eager_steps = 0, step_raw_s = 0, layers = 0;
    double served_count = 0;       // 1 for a TTFT through an API server (its request overhead), else 0
    double in_process_count = 0;   // 1 for a TTFT of an engine in the benchmark's process, else 0
    double tokens = 0;   // speed records: tokens the speed counts (prediction = tokens / seconds)
    std::string kernel_key;  // the profile's kernel scale this point's kernels take (kernel_scale_key)
    std::string prefill_kernel_key;  // kernel_key + "/prefill", built once (the fit reads it often)
    // KV: predicted budget = free_bytes - activation_bytes x scale - non_torch; tokens from it.
    double free_bytes = 0, activation_bytes = 0, measured_budget_bytes = 0;
    double kv_bytes_per_token = 0;
    std::int64_t block_tokens = 16;
    // vLLM's hybrid allocator (sliding windows, Mamba state): num_blocks = budget / kv_divisor_bytes
    // (a page x group_size), logged as num_blocks / kv_groups x kv_logged_block tokens. Without it
    // the divisor is one block of every layer, one group, the block.
    double kv_divisor_bytes = 0;
    std::int64_t kv_groups = 1;
    std::int64_t kv_logged_block = 16;
    // One run of one setup: its mean and median, its TPOT and ITL are one measurement for
    // leave-one-out, which holds them out together.
    std::string run_key;
    double tokens_per_block_bytes = 0;
};

class Pricer {
public:
    explicit Pricer(const FitInputs& in) : in_(in) {}

    const FitInputs& inputs() const { return in_; }

    // Resolves a record's setup, or says why it cannot be priced.
    std::optional<Resolved> resolve(const Record& r, std::string& why) {
        const RecordSetup& s = r.setup;
        if (s.engine != "vllm" && s.engine != "sglang") return why = "engine not vLLM or SGLang", std::nullopt;
        if (s.engine_version.empty()) return why = "engine version not stated", std::nullopt;
        const GpuProfile* gpu = find_gpu(in_.gpus, s.gpu);
        if (s.gpu.empty()) return why = "GPU variant not stated", std::nullopt;
        if (!gpu) return why = "GPU not bundled (" + s.gpu + ")", std::nullopt;
        const ModelConfig* model = model_named(s.model);
        // A fine-tune whose own config.json is not bundled: the architecture it was trained from.
        if (!model && !s.base_architecture.empty()) model = model_named(s.base_architecture);
        if (!model) {
            const BundledModel* bundled = bundled_entry(s.model);
            if (bundled && !bundled->priced) return why = "model config bundled, architecture not priced", std::nullopt;
            return why = "model config not bundled", std::nullopt;
        }
        Resolved out;
        out.model = *model;
        out.gpu = *gpu;
        try {
            out.scheme = parse_scheme(s.scheme.empty() ? "bf16" : s.scheme);
        } catch (const Error&) {
            return why = "scheme not priced (" + s.scheme + ")", std::nullopt;
        }
        const bool fp8_kv = s.kv_cache_dtype.find("fp8") != std::string::npos;
        out.kv = parse_kv_format(fp8_kv ? "fp8" : "bf16");
        try {
            out.profile = engine::resolve_engine_profile(in_.catalog, s.engine + "@" + s.engine_version).profile;
        } catch (const Error&) {
            return why = "engine version covered by no profile", std::nullopt;
        }
        if (model->num_attention_heads % s.tp != 0 || s.tp > 8) return why = "tensor-parallel degree not priced", std::nullopt;
        out.w.tensor_parallel = s.tp;
        out.w.kv = out.kv;
        // The max_model_len the engine ran with: as stated, else the model's, at least the run's lengths.
        const std::int64_t max_model_len =
            s.max_model_len.value_or(std::max<std::int64_t>(model->max_position_embeddings, s.input_tokens.value_or(s.input_tokens_p50.value_or(0)) +
                                                                                                  s.output_tokens.value_or(s.output_tokens_p50.value_or(0))));
        const engine::EngineDefaults dflt = engine::defaults_for_run(*out.profile, gpu->id, gpu->memory_usable_bytes, s.engine_version, max_model_len);
        out.defaults = dflt;
        out.w.engine.gpu_memory_utilization = s.gpu_memory_utilization.value_or(dflt.gpu_memory_utilization);
        out.w.engine.max_num_seqs = s.max_num_seqs.value_or(dflt.max_num_seqs);
        out.w.engine.max_num_batched_tokens = s.max_num_batched_tokens.value_or(dflt.max_num_batched_tokens);
        out.w.engine.kv_block_tokens = dflt.block_size_tokens;
        out.costs = engine::costs_as_served(costs_of(*model, out.scheme, out.kv, *gpu), *model, *out.profile);
        return out;
    }

private:
    const ModelConfig* model_named(const std::string& name) {
        if (name.empty()) return nullptr;
        if (const auto it = models_.find(name); it != models_.end()) return it->second ? &*it->second : nullptr;
        std::optional<ModelConfig> m;
        try {
            m = resolve_model(name, in_.models_dir);
        } catch (const Error&) {
        }
        return (models_[name] = std::move(m)) ? &*models_[name] : nullptr;
    }

    SchemeCosts costs_of(const ModelConfig& m, const Scheme& scheme, const KvFormat& kv, const GpuProfile& gpu) {
        const std::string key = m.name + "|" + scheme_name(scheme) + "|" + kv_format_name(kv) + "|" + gpu.id;
        if (const auto it = costs_.find(key); it != costs_.end()) return it->second;
        if (inventories_.find(m.name) == inventories_.end()) inventories_[m.name] = compress_inventory(tensor_inventory(m));
        return costs_[key] = scheme_costs(m, inventories_[m.name], scheme, kv, gpu);
    }

    // The catalog entry `name` resolves to (nullptr: not bundled, or no catalog).
    const BundledModel* bundled_entry(const std::string& name) {
        if (!catalog_) {
            catalog_.emplace();
            try {
                *catalog_ = load_model_catalog(in_.models_dir);
            } catch (const Error&) {
            }
        }
        return find_bundled_model(*catalog_, name);
    }

    const FitInputs& in_;
    // models/catalog.json, read on first use (empty when it cannot be read).
    std::optional<std::vector<BundledModel>> catalog_;
    std::map<std::string, std::optional<ModelConfig>> models_;
    std::map<std::string, std::vector<TensorInfo>> inventories_;
    std::map<std::string, SchemeCosts> costs_;
};

// The setup with the profile's step terms zeroed, so a price splits into base + terms.
EngineSetup zero_setup(const Resolved& r, const engine::KernelEfficiencies& k) {
    EngineSetup s;
    s.profile = *r.profile;
    s.profile.defaults = r.defaults;
    s.profile.step = {};
    s.kernels = k;
    s.price_steps = true;
    return s;
}

FigureClass figure_of(Metric m) {
    switch (m) {
        case Metric::DecodeTokensPerS:
        case Metric::TpotS:
        case Metric::ItlS:
        case Metric::E2eS: return FigureClass::Step;
        case Metric::TtftS:
        case Metric::PrefillS: return FigureClass::Ttft;
        case Metric::KvCacheTokens:
        case Metric::GpuBlocks:
        case Metric::KvCacheBytes: return FigureClass::KvTokens;
        case Metric::KernelTimeS: return FigureClass::Kernel;
        default: return FigureClass::Other;
    }
}

// Prices a record into a Point (out.usable false with the reason when it cannot be).
Point price_point(const Record& r, Pricer& pricer, const engine::KernelEfficiencies& kernels) {
    Point p;
    PricedPoint& o = p.out;
    o.id = r.id, o.file = r.file, o.source_key = r.source_key, o.metric = r.metric, o.figure = figure_of(r.metric);
    o.engine = r.setup.engine, o.gpu = r.setup.gpu, o.model = r.setup.model, o.scheme = r.setup.scheme, o.measured = r.value;
    const auto skip = [&](const std::string& why) {
        o.usable = false;
        o.skip_reason = why;
        return p;
    };
    if (o.figure == FigureClass::Other) return skip(std::string(metric_name(r.metric)) + " is not fitted (a serving or memory-term figure)");
    std::string why;
    const std::optional<Resolved> res = pricer.resolve(r, why);
    if (!res) return skip(why);
    o.profile = res->profile->id;
    o.family = engine::scheme_family(res->costs.scheme);
    o.model_type = res->model.model_type;
    o.arch = res->gpu.compute_capability;
    o.engine_version = r.setup.engine_version;
    o.batch = r.setup.batch.value_or(r.setup.concurrency.value_or(1));
    o.input_tokens = r.setup.input_tokens.value_or(0);
    o.output_tokens = r.setup.output_tokens.value_or(0);
    p.run_key = r.source_key + "|" + r.setup.model + "|" + r.setup.gpu + "|" + r.setup.scheme + "|" + r.setup.engine + r.setup.engine_version +
                "|" + std::to_string(r.setup.tp) + "|" + std::to_string(o.batch) + "|" + std::to_string(r.setup.input_tokens.value_or(-1)) + "|" +
                std::to_string(r.setup.output_tokens.value_or(-1)) + "|" + std::to_string(r.setup.max_model_len.value_or(-1)) + "|" +
                std::to_string(r.setup.gpu_memory_utilization.value_or(-1)) + "|" + engine::figure_class_name(o.figure);
    const RecordSetup& s = r.setup;
    // vLLM before awq_marlin runs an AWQ checkpoint with its AWQ GEMM kernel: the generic family.
    std::string quantization = s.quantization;
    for (char& ch : quantization) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    Workload w = res->w;
    if (quantization.find("awq") != std::string::npos && engine::awq_without_marlin(res->defaults, s.engine_version)) w.kernel = KernelQuality::Generic;
    const bool generic = engine::weight_kernel_family(res->costs.scheme, res->gpu, w.kernel) == engine::KernelFamily::GenericDequant;
    if (generic) o.note = "vLLM before " + res->defaults.awq_marlin_from_version + ": AWQ's own GEMM kernel, priced as generic dequant";
    p.kernel_key = engine::kernel_scale_key(res->costs.scheme, res->model.is_moe(), generic);
    p.prefill_kernel_key = p.kernel_key + "/prefill";
    EngineSetup setup = zero_setup(*res, kernels);
    if (s.mem_fraction_static) setup.profile.defaults.mem_fraction_static = *s.mem_fraction_static;
    if (s.chunked_prefill) setup.profile.defaults.chunked_prefill = *s.chunked_prefill;
    if (s.cuda_graphs) setup.profile.defaults.cuda_graphs = *s.cuda_graphs;
    // The sampler the log names, else the record's version's default (the setup prices the newest).
    setup.profile.memory.native_sampler = s.native_sampler ? *s.native_sampler : engine::native_sampler_in_profile(setup.profile.memory, s.engine_version);
    if (o.figure == FigureClass::KvTokens) {
        // A KV connector (vLLM's kv_transfer_config: LMCache, NIXL, ...) runs in the same process
        // and may hold GPU memory of its own that no profile term models: its budget is not fitted.
        if (!s.kv_transfer_config.empty()) return skip("a KV connector (" + s.kv_transfer_config + ") shares the GPU: its memory is not modelled");
        // SGLang's "K size" and "V size" are each half of the pool whose "#tokens" the same line
        // gives (and the corpus records): fitted once, as that token count.
        if (!r.component.empty()) return skip("the K or V half of a KV pool is not fitted (the same line's kv_cache_tokens is)");
        const std::int64_t max_model_len = s.max_model_len.value_or(res->model.max_position_embeddings);
        w.context_tokens = std::max<std::int64_t>(1, max_model_len);
        engine::EngineSetup unscaled = setup;
        unscaled.profile.memory.activation_scale = 1.0;
        unscaled.profile.memory.non_torch_bytes = 0;
        unscaled.profile.memory.non_torch_bytes_per_extra_rank = 0;
        const Admission a = engine::engine_admission(res->costs, res->model, res->gpu, unscaled, w, max_model_len);
        p.activation_bytes = d(a.activation_workspace_bytes);
        p.free_bytes = d(a.engine_memory_bytes) - d(a.weight_bytes) - d(a.sampler_workspace_bytes) - d(a.runtime_overhead_bytes);
        p.kv_bytes_per_token = d(a.kv_bytes_per_token);
        p.block_tokens = a.kv_block_tokens > 0 ? a.kv_block_tokens : res->profile->defaults.block_size_tokens;  // as paged (MLA: 64; a Mamba state: raised)
        if (res->profile->memory.rule == engine::BudgetRule::StaticFraction) p.activation_bytes = 0;  // not part of SGLang's rule
        double tokens = r.value;
        // vLLM's hybrid allocator (sliding-window layers) counts num_gpu_blocks over all its KV
        // groups and logs num_blocks / groups x block tokens (kv_cache_utils.py).
        const HybridKvGroups groups = hybrid_kv_groups(res->costs);
        const bool hybrid = engine::kv_groups_priced(res->costs, *res->profile, s.engine_version);
        const double block_groups = hybrid ? d(std::max<std::int64_t>(groups.groups(), 1)) : 1.0;
        p.kv_divisor_bytes = p.kv_bytes_per_token * d(p.block_tokens);
        p.kv_logged_block = p.block_tokens;
        if (hybrid) {
            const std::int64_t attention_layers = std::max<std::int64_t>(res->costs.sliding_layers + res->costs.full_layers, 1);
            const double page = d(a.kv_bytes_per_token / static_cast<std::uint64_t>(attention_layers)) * d(p.block_tokens);
            p.kv_divisor_bytes = page * d(std::max<std::int64_t>(groups.group_size, 1));
            p.kv_groups = std::max<std::int64_t>(groups.groups(), 1);
            if (res->costs.state_layers > 0) p.kv_logged_block = std::min(p.block_tokens, w.context_tokens);
        }
        if (r.metric == Metric::GpuBlocks) tokens = r.value * d(p.kv_logged_block) / block_groups;
        // The budget the logged size stands for (through the same division, inverted).
        const double budget_of_tokens =
            hybrid ? tokens / d(p.kv_logged_block) * d(p.kv_groups) * p.kv_divisor_bytes : tokens * p.kv_bytes_per_token;
        p.measured_budget_bytes = r.metric == Metric::KvCacheBytes ? r.value : budget_of_tokens;
        o.measured = r.metric == Metric::KvCacheBytes ? r.value / p.kv_bytes_per_token : tokens;  // compared as tokens
        o.usable = p.measured_budget_bytes > 0 && p.kv_bytes_per_token > 0;
        if (!o.usable) o.skip_reason = "no KV budget to compare";
        return p;
    }
    // Times.
    // At one request in flight (a client's max-concurrency of 1) the arrival rate only spaces the
    // requests: vLLM's benchmark clients start a request's clock after the concurrency semaphore
    // (benchmarks/serve.py limited_request_func; endpoint_request_func.py sets st inside), so
    // each request is timed alone whatever the rate.
    if (s.request_rate && !(s.concurrency && *s.concurrency == 1)) return skip("a request rate needs the serving simulator");
    const std::int64_t batch = s.batch.value_or(s.concurrency.value_or(0));
    if (batch != 1 && !(s.batch && (r.metric == Metric::TpotS || r.metric == Metric::ItlS || r.metric == Metric::E2eS)))
        return skip("batch or concurrency above 1 needs the serving simulator");
    if (s.concurrency && *s.concurrency > 1) return skip("concurrency above 1 needs the serving simulator");
    // A tail (p90, p99) is where the step model's typical step is not: only means and medians are fitted.
    if (r.stat == "p90" || r.stat == "p95" || r.stat == "p99" || r.stat == "max" || r.stat == "min")
        return skip("a tail statistic (" + r.stat + ") is not fitted");
    std::optional<std::int64_t> input = s.input_tokens, output = s.output_tokens;
    if (!input && s.input_tokens_p50) {
        input = s.input_tokens_p50;
        o.note += (o.note.empty() ? "" : "; ") + std::string("priced at the stated median input length");
    }
    if (!output && s.output_tokens_p50) {
        output = s.output_tokens_p50;
        o.note += (o.note.empty() ? "" : "; ") + std::string("priced at the stated median output length");
    }
    if ((!input || !output) && s.num_prompts && *s.num_prompts > 0 && s.total_input_tokens && s.total_output_tokens &&
        r.metric != Metric::DecodeTokensPerS && r.metric != Metric::E2eS) {
        // One request at a time over a dataset: TPOT, ITL and TTFT at the dataset's mean lengths.
        input = *s.total_input_tokens / *s.num_prompts;
        output = *s.total_output_tokens / *s.num_prompts;
        o.note += (o.note.empty() ? "" : "; ") + std::string("priced at the dataset's mean lengths");
    }
    if (!input || !output) return skip("input or output length not stated");
    constexpr std::int64_t kMaxTokens = std::int64_t{1} << 24;  // no engine serves a longer context
    if (*input > kMaxTokens || *output > kMaxTokens || batch > (std::int64_t{1} << 20)) return skip("lengths or batch beyond any served context");
    const std::int64_t in_tokens = std::max<std::int64_t>(1, *input), out_tokens = std::max<std::int64_t>(1, *output);
    o.input_tokens = in_tokens, o.output_tokens = out_tokens;  // as priced (a dataset's means where so noted)
    const std::int64_t max_model_len = s.max_model_len.value_or(0);
    if (max_model_len > 0 && in_tokens + out_tokens > max_model_len + 64) return skip("lengths beyond the stated max_model_len");
    const double layers = d(res->model.per_layer_cost_layers());
    w.batch = batch;
    const PrefillResult pre = engine::engine_prefill(res->costs, res->model, res->gpu, setup, w, in_tokens * batch);
    const std::int64_t mid_context = in_tokens + out_tokens / 2;
    const engine::StepLookups lookups = engine::resolve_step_lookups(res->costs, res->model, res->gpu, setup, w);
    const engine::EngineStep step = engine::engine_decode_step(lookups, res->costs, res->model, res->gpu, setup, w, batch, mid_context);
    if (step.linear_coverage != "gpu")
        o.note += (o.note.empty() ? "" : "; ") + std::string("linear kernels priced from the ") + std::string(step.linear_coverage) + " curve";
    const double decode_steps = d(out_tokens - 1);
    switch (r.metric) {
        case Metric::DecodeTokensPerS:
        case Metric::E2eS:
            p.prefill_s = pre.time_s;
            p.decode_s = decode_steps * step.time_s;
            p.fixed_count = d(pre.chunks) + decode_steps;
            if (r.metric == Metric::DecodeTokensPerS) {
                p.tokens = d(out_tokens) + (r.speed_counts_prompt ? d(in_tokens) : 0.0);
                p.measured_s = p.tokens / r.value;
            } else {
                p.measured_s = r.value;
            }
            break;
        case Metric::TpotS:
        case Metric::ItlS:
            p.decode_s = step.time_s;
            p.fixed_count = 1;
            p.measured_s = r.value;
            break;
        default:  // TTFT, prefill
            p.prefill_s = pre.time_s;
            p.fixed_count = d(pre.chunks);
            p.measured_s = r.value;
            // A served request's TTFT holds the API server's overhead; an in-process run's and a
            // bare prefill time do not.
            p.served_count = r.metric == Metric::TtftS && !s.in_process.value_or(false) ? 1.0 : 0.0;
            p.in_process_count = r.metric == Metric::TtftS && s.in_process.value_or(false) ? 1.0 : 0.0;
            break;
    }
    p.layer_count = p.fixed_count * layers;
    p.layers = layers;
    p.step_raw_s = step.time_s;
    // Decode steps with CUDA graphs off, or (vLLM V0) over a sequence longer than the captured
    // length, pay the eager launch cost per layer. Prefill chunks are not charged it: they run
    // beyond the captured sizes in every engine, so the fitted prefill scales and per-layer cost
    // already hold their launches.
    // A batch above the largest captured one runs every decode step eager.
    const bool batch_eager = batch > lookups.graph_max_batch;
    if (r.metric == Metric::TpotS || r.metric == Metric::ItlS) {
        if (step.eager) p.eager_steps = 1;
    } else if (r.metric != Metric::TtftS && r.metric != Metric::PrefillS) {
        // Decode step j (1 .. out - 1) runs over in + j tokens.
        p.eager_steps = batch_eager ? decode_steps : d(engine::eager_decode_steps(setup.profile.defaults, in_tokens + 1, out_tokens - 1));
    }
    p.eager_layer_count = p.eager_steps * layers;
    o.usable = p.measured_s > 0;
    if (!o.usable) o.skip_reason = "measured value is zero";
    return p;
}

// Terms fitted on a set of points (step terms and memory terms per profile).
struct Terms {
    std::map<std::string, engine::StepTerms> step;
    std::map<std::string, engine::MemoryRules> memory;
};

// The kernel part of a point's time under `st` (its decode and prefill scales).
double scaled_kernels_s(const Point& p, const engine::StepTerms& st) {
    return st.kernel_scale(p.kernel_key) * p.decode_s + st.kernel_scale(p.prefill_kernel_key) * p.prefill_s;
}

// The GPU time of one of a point's eager steps under `st` (engine_decode_step's gpu_s).
double eager_gpu_step_s(const Point& p, const engine::StepTerms& st) {
    return st.kernel_scale(p.kernel_key) * p.step_raw_s + st.fixed_step_s + p.layers * (st.per_layer_s + st.eager_per_layer_s);
}

// What the host adds to a point's eager steps under `st`: per step, eager_step_s(G, H) - G with G
// the step's GPU time and H its layers x the host cost of the point's engine version.
double eager_host_extra_s(const Point& p, const engine::StepTerms& st) {
    if (!(p.eager_steps > 0)) return 0.0;
    const engine::EagerHostCost* host = st.eager_host_for(p.out.engine_version);
    if (!host || !(st.eager_blend_exponent > 0)) return 0.0;
    const double g = eager_gpu_step_s(p, st);
    return p.eager_steps * (engine::eager_step_s(g, p.layers * host->per_layer_s, st.eager_blend_exponent) - g);
}

// A time point's predicted seconds under `st`.
double predicted_seconds(const Point& p, const engine::StepTerms& st) {
    return scaled_kernels_s(p, st) + p.fixed_count * st.fixed_step_s + p.layer_count * st.per_layer_s + p.eager_layer_count * st.eager_per_layer_s +
           p.served_count * st.ttft_overhead_s + p.in_process_count * st.ttft_overhead_in_process_s + eager_host_extra_s(p, st);
}

// An engine version as the host cost keys it: its minor release ("0.19.1rc1.dev339" -> "0.19"),
// the unit in which an engine's host code changes (one source's rows at 0.6.2 and 0.6.3 share one);
// "" when the text is no version.
std::string release_of(const std::string& version) {
    try {
        const engine::EngineVersion v = engine::parse_engine_version(version, "version");
        return std::to_string(v.parts.at(0)) + "." + std::to_string(v.parts.size() > 1 ? v.parts[1] : 0);
    } catch (const std::exception&) {
        return "";
    }
}

// Step terms of one group of points with the host term held (each point's eager_host_extra_s
// under `held` taken as known): kernel scale per kernel_scale_key, fixed and per-layer costs,
// fitted on the relative residual (scale_f x base + fixed x a + per_layer x b + host) / measured - 1.
engine::StepTerms fit_linear_step(const std::vector<const Point*>& v, const std::string& basis, const engine::StepTerms* held) {
    // One scale per kernel key at decode and one at prefill ("<key>/prefill"): a kernel reaches a
    // different share of its roofline at M = batch than at M = a prefill chunk.
    std::vector<std::string> keys;
    const auto column = [&](const std::string& key) {
        const auto it = std::find(keys.begin(), keys.end(), key);
        if (it != keys.end()) return static_cast<std::size_t>(it - keys.begin());
        keys.push_back(key);
        return keys.size() - 1;
    };
    for (const Point* p : v) {
        if (p->decode_s > 0) column(p->kernel_key);
        if (p->prefill_s > 0) column(p->prefill_kernel_key);
    }
    std::vector<std::vector<double>> rows;
    std::vector<double> c;
    for (const Point* p : v) {
        std::vector<double> row(keys.size() + 5, 0.0);
        if (p->decode_s > 0) row[column(p->kernel_key)] = p->decode_s / p->measured_s;
        if (p->prefill_s > 0) row[column(p->prefill_kernel_key)] = p->prefill_s / p->measured_s;
        row[keys.size()] = p->fixed_count / p->measured_s;
        row[keys.size() + 1] = p->layer_count / p->measured_s;
        row[keys.size() + 2] = p->eager_layer_count / p->measured_s;
        row[keys.size() + 3] = p->served_count / p->measured_s;
        row[keys.size() + 4] = p->in_process_count / p->measured_s;
        rows.push_back(std::move(row));
        c.push_back(1.0 - (held ? eager_host_extra_s(*p, *held) / p->measured_s : 0.0));
    }
    const std::vector<double> x = nnls(rows, c);
    engine::StepTerms s;
    for (std::size_t f = 0; f < keys.size(); ++f) s.kernel_scale_by_family[keys[f]] = std::clamp(x[f], 0.01, 100.0);
    s.fixed_step_s = std::min(x[keys.size()], 10.0);
    s.per_layer_s = std::min(x[keys.size() + 1], 1.0);
    s.eager_per_layer_s = std::min(x[keys.size() + 2], 1.0);
    s.ttft_overhead_s = std::min(x[keys.size() + 3], 100.0);
    s.ttft_overhead_in_process_s = std::min(x[keys.size() + 4], 100.0);
    s.fitted_points = static_cast<std::int64_t>(v.size());
    s.basis = std::to_string(v.size()) + " end-to-end points " + basis;
    if (held) s.eager_host = held->eager_host, s.eager_blend_exponent = held->eager_blend_exponent;
    return s;
}

double squared_relative_residuals(const std::vector<const Point*>& v, const engine::StepTerms& st) {
    double sum = 0;
    for (const Point* p : v) {
        const double r = predicted_seconds(*p, st) / p->measured_s - 1.0;
        sum += r * r;
    }
    return sum;
}

// The host cost per layer of one version's eager points `v` that minimises their squared relative
// residuals with everything else in `st` held (no other point depends on it): a grid over 0 to
// 2 ms, then golden-section between the best grid point's neighbours.
double fit_host_per_layer(const std::vector<const Point*>& v, engine::StepTerms st, std::size_t tier) {
    // Each point's time without its host term and its eager steps' GPU time, which h leaves alone.
    struct Held {
        double rest_s, gpu_s, steps, layers, measured_s;
    };
    std::vector<Held> held;
    st.eager_host[tier].per_layer_s = 0;
    for (const Point* p : v) held.push_back({predicted_seconds(*p, st), eager_gpu_step_s(*p, st), p->eager_steps, p->layers, p->measured_s});
    const double exponent = st.eager_blend_exponent;
    const auto cost = [&](double h) {
        double sum = 0;
        for (const Held& x : held) {
            const double t = x.rest_s + x.steps * (engine::eager_step_s(x.gpu_s, x.layers * h, exponent) - x.gpu_s);
            sum += (t / x.measured_s - 1.0) * (t / x.measured_s - 1.0);
        }
        return sum;
    };
    constexpr double kMax = 2e-3, kStep = 5e-5;
    double best = 0, best_cost = cost(0);
    for (double h = kStep; h <= kMax + 1e-12; h += kStep)
        if (const double c = cost(h); c < best_cost) best = h, best_cost = c;
    double lo = std::max(0.0, best - kStep), hi = std::min(kMax, best + kStep);
    const double g = (std::sqrt(5.0) - 1.0) / 2.0;
    double a = hi - g * (hi - lo), b = lo + g * (hi - lo), ca = cost(a), cb = cost(b);
    for (int i = 0; i < 30; ++i) {  // the bracket shrinks to 0.618^30 of 0.1 ms
        if (ca < cb) hi = b, b = a, cb = ca, a = hi - g * (hi - lo), ca = cost(a);
        else lo = a, a = b, ca = cb, b = lo + g * (hi - lo), cb = cost(b);
    }
    const double mid = (lo + hi) / 2.0;
    return cost(mid) < best_cost ? mid : best;
}

// The blend exponents tried for an eager step (eager_step_s); the one with the smallest squared
// relative residuals over the group is kept.
constexpr double kBlendExponents[] = {1.5, 2.0, 3.0, 4.0, 6.0, 10.0};

// Step terms of one group of points: the linear terms (fit_linear_step) and, when the group has
// eager points, the host cost per engine version and the blend exponent. For each exponent the
// linear terms and the host costs are fitted in turn (each with the other held), four rounds.
engine::StepTerms fit_step(const std::vector<const Point*>& v, const std::string& basis) {
    std::map<std::string, std::vector<const Point*>> eager;  // by release
    for (const Point* p : v)
        if (p->eager_steps > 0 && !p->out.engine_version.empty()) eager[release_of(p->out.engine_version)].push_back(p);
    if (eager.erase(""); eager.empty()) return fit_linear_step(v, basis, nullptr);
    std::vector<std::pair<std::string, std::vector<const Point*>>> tiers(eager.begin(), eager.end());
    std::sort(tiers.begin(), tiers.end(), [](const auto& a, const auto& b) {
        return engine::compare_versions(engine::parse_engine_version(a.first, "version"), engine::parse_engine_version(b.first, "version")) < 0;
    });
    std::optional<engine::StepTerms> best;
    double best_cost = 0;
    for (const double exponent : kBlendExponents) {
        engine::StepTerms st = fit_linear_step(v, basis, nullptr);
        st.eager_blend_exponent = exponent;
        st.eager_host.clear();
        for (const auto& [release, points] : tiers) st.eager_host.push_back({release, 0.0, static_cast<std::int64_t>(points.size())});
        for (int round = 0; round < 4; ++round) {
            for (std::size_t t = 0; t < tiers.size(); ++t) st.eager_host[t].per_layer_s = fit_host_per_layer(tiers[t].second, st, t);
            st = fit_linear_step(v, basis, &st);
        }
        const double c = squared_relative_residuals(v, st);
        if (!best || c < best_cost) best = st, best_cost = c;
    }
    return *best;
}

// Memory terms of one group (budget = free - activation - non_torch, relative to the measured budget).
engine::MemoryRules fit_memory(const std::vector<const Point*>& v) {
    std::vector<std::vector<double>> rows;
    std::vector<double> c;
    for (const Point* p : v) {
        // Non-torch memory in GiB. The activation peak is held at its own model (scale 1): over the
        // priced logs it is 0.05 to 0.8 GiB, the size of the spread in what else they deduct, so a
        // free scale is not identified (it fits 0, which would erase vLLM V0's profiling forward of
        // max_model_len tokens).
        rows.push_back({1073741824.0 / p->measured_budget_bytes});
        c.push_back((p->free_bytes - p->activation_bytes) / p->measured_budget_bytes - 1.0);
    }
    const std::vector<double> x = nnls(rows, c);
    const double scale = 1.0, non_torch_gib = x[0];
    engine::MemoryRules m;
    m.activation_scale = std::min(scale, 100.0);
    m.non_torch_bytes = static_cast<std::uint64_t>(std::min(non_torch_gib, 64.0) * 1073741824.0);
    return m;
}

// The catalog's profiles (id, engine, versions covered): a profile with no point of its own takes
// the terms fitted on every point of its engine (then of every engine), and says so in its basis.
using ProfileList = std::vector<const EngineProfile*>;

// A profile fits its own fixed and per-layer costs only on this many step points of at least two
// models; fewer (one model at several lengths cannot tell a per-layer cost from a kernel scale)
// take its engine's.
constexpr std::size_t kMinProfileStepPoints = 8;

// The fixed and per-layer costs of `v` with the kernel scales of `scales` held: non-negative least
// squares on the relative residual (scale x base + fixed x a + per_layer x b) / measured - 1.
engine::StepTerms refit_costs(const std::vector<const Point*>& v, const engine::StepTerms& scales, const std::string& basis) {
    std::vector<std::vector<double>> rows;
    std::vector<double> c;
    for (const Point* p : v) {
        rows.push_back({p->fixed_count / p->measured_s, p->layer_count / p->measured_s});
        c.push_back(1.0 - (scaled_kernels_s(*p, scales) + p->eager_layer_count * scales.eager_per_layer_s + eager_host_extra_s(*p, scales)) /
                              p->measured_s);
    }
    const std::vector<double> x = nnls(rows, c);
    engine::StepTerms s = scales;
    s.fixed_step_s = std::min(x[0], 10.0);
    s.per_layer_s = std::min(x[1], 1.0);
    s.fitted_points = static_cast<std::int64_t>(v.size());
    s.basis = basis;
    return s;
}

// Whether fit_terms reads a point at all: usable, and a KV-cache, TTFT or step figure (the memo of
// evaluate_fidelity keys its held-out sets on these points only).
bool fitted_by_terms(const Point& p) {
    return p.out.usable && (p.out.figure == FigureClass::KvTokens || p.out.figure == FigureClass::Ttft || p.out.figure == FigureClass::Step);
}

// Models a MoE kernel scale apart from the dense one needs (fit_terms).
constexpr std::size_t kMinModelsForMoeScale = 2;

Terms fit_terms(const std::vector<Point>& points, const std::vector<bool>& include, const ProfileList& profiles) {
    // Step points (decode speed, TPOT/ITL, E2E) and TTFT points. The engine's terms are fitted on
    // both at once: a TTFT point prices its prefill chunks alone, so it pins the prefill scales the
    // decode-speed points only see mixed with their decode, and it fits the per-request overhead
    // (HTTP, tokenizer, scheduling) as one more column.
    std::map<std::string, std::vector<const Point*>> step_by_profile, kv_by_profile;
    std::map<std::string, std::vector<const Point*>> step_by_engine, kv_by_engine;
    std::vector<const Point*> step_all;
    // A MoE kernel scale apart from its dense family's ("bf16-moe" beside "bf16", at decode or at
    // prefill) stands on the points of kMinModelsForMoeScale models or more of the engine; with
    // fewer, that one model's points are left out of every step fit (the engine's, its profiles'
    // own costs and host terms, the pool over every engine): they would carry that model's own
    // costs to every MoE of the engine, or move the dense scales (vLLM's bf16-moe, fitted on
    // Qwen2-57B-A14B's four V0 speed rows alone, came out at 2.6 at decode and 18.7 at prefill and
    // priced Mixtral-8x7B and Qwen3-235B-A22B under load 2 to 7 times slow: docs/fidelity.md). The
    // profile then holds no such key, and prices those points and every MoE of the family with
    // the dense scales.
    std::map<std::pair<std::string, std::string>, std::set<std::string>> moe_models;  // (engine, column) -> models
    const auto moe_columns = [](const Point& p) {
        std::vector<std::string> c;
        if (p.kernel_key.find("-moe") == std::string::npos) return c;
        if (p.decode_s > 0) c.push_back(p.kernel_key);
        if (p.prefill_s > 0) c.push_back(p.prefill_kernel_key);
        return c;
    };
    for (std::size_t i = 0; i < points.size(); ++i) {
        const Point& p = points[i];
        if (!include[i] || !fitted_by_terms(p) || p.out.figure == FigureClass::KvTokens) continue;
        for (const std::string& c : moe_columns(p)) moe_models[{p.out.engine, c}].insert(p.out.model);
    }
    const auto moe_unsupported = [&](const Point& p) {
        for (const std::string& c : moe_columns(p))
            if (moe_models[{p.out.engine, c}].size() < kMinModelsForMoeScale) return true;
        return false;
    };
    for (std::size_t i = 0; i < points.size(); ++i) {
        const Point& p = points[i];
        if (!include[i] || !fitted_by_terms(p)) continue;
        if (p.out.figure != FigureClass::KvTokens && moe_unsupported(p)) continue;
        if (p.out.figure == FigureClass::KvTokens) {
            kv_by_profile[p.out.profile].push_back(&p);
            kv_by_engine[p.out.engine].push_back(&p);
        } else if (p.out.figure == FigureClass::Ttft) {
            step_by_engine[p.out.engine].push_back(&p);
            step_all.push_back(&p);
        } else if (p.out.figure == FigureClass::Step) {
            step_by_profile[p.out.profile].push_back(&p);
            step_by_engine[p.out.engine].push_back(&p);
            step_all.push_back(&p);
        }
    }
    // The kernel scales are the engine's (its kernels, across its versions), with its pooled costs.
    std::map<std::string, engine::StepTerms> engine_terms;
    for (const auto& [engine, v] : step_by_engine)
        engine_terms[engine] = fit_step(v, "pooled over every " + engine + " profile (decode speed, TPOT/ITL, E2E and TTFT at batch or concurrency 1)");
    const engine::StepTerms every_engine = step_all.empty() ? engine::StepTerms{} : fit_step(step_all, "pooled over every engine");
    Terms t;
    for (const EngineProfile* profile : profiles) {
        const std::string& id = profile->id;
        const std::string& engine = profile->engine;
        const auto e = engine_terms.find(engine);
        engine::StepTerms terms = e != engine_terms.end() ? e->second : every_engine;
        // The host costs of the versions this profile covers; with none, every version's (a plan
        // takes the nearest version below its own).
        std::vector<engine::EagerHostCost> own_host;
        for (const engine::EagerHostCost& h : terms.eager_host)
            if (profile->covers(engine::parse_engine_version(h.version, "eager_host.version"))) own_host.push_back(h);
        if (!own_host.empty()) terms.eager_host = std::move(own_host);
        if (e == engine_terms.end() && !step_all.empty()) terms.basis = every_engine.basis + " (no " + engine + " point)";
        // The profile's own points fit its fixed and per-layer costs; with too few, those of the
        // profile it names as stepping alike (vLLM 0.20's, split off for its memory rule, steps
        // as the V1 engine before it), else the engine's pooled costs stay.
        const auto own_costs = [&](const std::string& from, const std::string& what) {
            const auto own = step_by_profile.find(from);
            if (own == step_by_profile.end() || own->second.size() < kMinProfileStepPoints) return false;
            std::set<std::string> models;
            for (const Point* p : own->second) models.insert(p->out.model);
            if (models.size() < 2) return false;
            terms = refit_costs(own->second, terms, std::to_string(own->second.size()) + " end-to-end points of " + what + " (" +
                                                        std::to_string(models.size()) + " models), kernel scales of every " + engine + " profile");
            return true;
        };
        if (!own_costs(id, "this profile") && !profile->step_terms_from.empty())
            own_costs(profile->step_terms_from, profile->step_terms_from + " (" + profile->step_terms_reason + ")");
        if (!step_all.empty()) t.step[id] = terms;
        // Memory: the profile's own points, else its engine's (SGLang's rule has no activation term).
        if (const auto k = kv_by_profile.find(id); k != kv_by_profile.end()) t.memory[id] = fit_memory(k->second);
        else if (const auto ke = kv_by_engine.find(engine); ke != kv_by_engine.end()) t.memory[id] = fit_memory(ke->second);
    }
    return t;
}

// A point's prediction with the given terms (the unit of the record: seconds, tokens/s or tokens).
double predict(const Point& p, const Terms& t) {
    if (p.out.figure == FigureClass::KvTokens) {
        const auto m = t.memory.find(p.out.profile);
        const double scale = m == t.memory.end() ? 1.0 : m->second.activation_scale;
        const double non_torch = m == t.memory.end() ? 0.0 : d(m->second.non_torch_bytes);
        const double budget = p.free_bytes - scale * p.activation_bytes - non_torch;
        if (budget <= 0) return 0.0;
        if (p.kv_groups > 1) return std::floor(std::floor(budget / p.kv_divisor_bytes) / d(p.kv_groups)) * d(p.kv_logged_block);
        const double block_bytes = p.kv_bytes_per_token * d(p.block_tokens);
        return std::floor(budget / block_bytes) * d(p.block_tokens);
    }
    const auto s = t.step.find(p.out.profile);
    const double seconds = s == t.step.end() ? p.decode_s + p.prefill_s : predicted_seconds(p, s->second);
    if (p.out.metric == Metric::DecodeTokensPerS) return p.tokens / seconds;
    return seconds;
}

double relative_error(const PricedPoint& p, double predicted) {
    if (p.measured <= 0 || predicted <= 0) return predicted <= 0 ? -1.0 : 0.0;
    // Speeds are compared as the times they imply, so an error means the same for every metric.
    if (p.metric == Metric::DecodeTokensPerS) return p.measured / predicted - 1.0;
    return predicted / p.measured - 1.0;
}

ProfileList profile_list(const FitInputs& in) {
    ProfileList out;
    for (const EngineProfile& p : in.catalog.profiles) out.push_back(&p);
    return out;
}

struct Pricing {
    double cuda_graph_bytes = 0;  // median of the logged positive CUDA-graph sizes ("Graph capturing ... took")
    std::vector<Point> points;
    std::int64_t kernel_records = 0;
    engine::KernelEfficiencies kernels;
    std::map<std::string, std::int64_t> skipped;
};

Pricing price_corpus(const Corpus& corpus, const FitInputs& in) {
    Pricing out;
    const std::vector<KernelSample> samples = kernel_samples(corpus, in);
    out.kernel_records = static_cast<std::int64_t>(samples.size());
    out.kernels = fit_kernels(samples, in);
    Pricer pricer(in);
    std::vector<double> graphs;
    for (const Record& r : corpus.records)
        if (r.metric == Metric::CudaGraphBytes && r.value > 0) graphs.push_back(r.value);
    out.cuda_graph_bytes = quantile(graphs, 0.5);
    for (const Record& r : corpus.records) {
        if (r.metric == Metric::KernelTimeS) continue;
        Point p = price_point(r, pricer, out.kernels);
        if (!p.out.usable) ++out.skipped[p.out.skip_reason];
        out.points.push_back(std::move(p));
    }
    return out;
}

engine::FittedParameters parameters_of(const Corpus& corpus, const Pricing& pricing, const Terms& terms, const FitInputs& in) {
    engine::FittedParameters f;
    f.corpus_checksum = corpus.checksum;
    f.corpus_records = static_cast<std::int64_t>(corpus.records.size());
    f.step = terms.step;
    f.memory = terms.memory;
    // Profiles that subtract CUDA-graph memory take the median graph size the corpus logs.
    for (const EngineProfile& p : in.catalog.profiles)
        if (p.memory.cuda_graph_counted && pricing.cuda_graph_bytes > 0)
            f.memory[p.id].cuda_graph_bytes = static_cast<std::uint64_t>(pricing.cuda_graph_bytes);
    f.kernels = pricing.kernels;
    return f;
}

}  // namespace

engine::KernelEfficiencies calibrated_kernels(const engine::KernelEfficiencies& fitted, const Calibration& c, const GpuProfile& gpu,
                                              std::vector<std::string>* replaced) {
    static const std::map<std::string, KernelFamily> kFamilies = {
        {"gemm_bf16", KernelFamily::Bf16Gemm},       {"w4a16_fused", KernelFamily::W4A16},       {"w4a16_generic", KernelFamily::GenericDequant},
        {"w8a8_int8", KernelFamily::Int8W8A8},       {"w8a8_fp8", KernelFamily::Fp8W8A8},        {"attention_bf16", KernelFamily::AttentionBf16},
        {"attention_fp8", KernelFamily::AttentionFp8},
    };
    std::vector<KernelSample> samples;
    for (const KernelMeasurement& m : c.measurements) {
        const auto f = kFamilies.find(m.kernel);
        if (f == kFamilies.end() || !(m.measured_time_s > 0) || m.bytes == 0) continue;
        KernelSample s{gpu.id, gpu.compute_capability, f->second, std::max<std::int64_t>(m.batch, 1), 0.0, d(m.bytes), m.measured_time_s, "calibration", ""};
        if (f->second != KernelFamily::AttentionBf16 && f->second != KernelFamily::AttentionFp8) {
            const double peak = matmul_peak_flop_per_s(gpu, family_matmul(f->second));
            if (peak <= 0) continue;
            s.fraction = std::min(1.5, std::max(d(m.bytes) / gpu.memory_bandwidth_bytes_per_s, m.flop / peak) / m.measured_time_s);
        }
        samples.push_back(s);
    }
    std::map<KernelFamily, std::vector<const KernelSample*>> by_family;
    for (const KernelSample& s : samples) by_family[s.family].push_back(&s);
    engine::KernelEfficiencies out = fitted;
    const std::vector<GpuProfile> gpus = {gpu};
    for (const auto& [family, v] : by_family) {
        const std::string basis = "calibration file of " + c.device.name + " (" + c.created_by + "), " + std::to_string(v.size()) + " points";
        out.by_gpu[gpu.id][family] = family == KernelFamily::AttentionBf16 || family == KernelFamily::AttentionFp8
                                         ? attention_curve(v, gpus, basis)
                                         : gemm_curve(v, basis);
        out.by_gpu[gpu.id][family].calibrated = true;
        out.calibrated = true;
        if (replaced) replaced->push_back(engine::kernel_family_name(family));
    }
    return out;
}

double PricedPoint::error_fitted() const { return relative_error(*this, fitted); }
double PricedPoint::error_loo() const { return relative_error(*this, loo); }
double PricedPoint::error_loso() const { return relative_error(*this, loso); }

engine::FittedParameters fit_engine_parameters(const Corpus& corpus, const FitInputs& in) {
    const Pricing pricing = price_corpus(corpus, in);
    return parameters_of(corpus, pricing, fit_terms(pricing.points, std::vector<bool>(pricing.points.size(), true), profile_list(in)), in);
}

FidelityReport evaluate_fidelity(const Corpus& corpus, const FitInputs& in) {
    Pricing pricing = price_corpus(corpus, in);
    std::vector<Point>& points = pricing.points;
    const std::vector<bool> all(points.size(), true);
    const ProfileList profiles = profile_list(in);
    const Terms full = fit_terms(points, all, profiles);
    FidelityReport report;
    report.parameters = parameters_of(corpus, pricing, full, in);
    report.kernel_records = pricing.kernel_records;
    report.skipped = pricing.skipped;
    // Every point of a run holds out the same points, and every point of a source the same: each
    // distinct set is fitted once. The key keeps only the points fit_terms reads (fitted_by_terms),
    // so two sets that differ elsewhere share one fit.
    std::map<std::vector<bool>, Terms> fitted_without;
    const auto fit_without = [&](const std::vector<bool>& include) -> const Terms& {
        std::vector<bool> key(include.size(), false);
        for (std::size_t j = 0; j < points.size(); ++j) key[j] = include[j] && fitted_by_terms(points[j]);
        auto it = fitted_without.find(key);
        if (it == fitted_without.end()) it = fitted_without.emplace(key, fit_terms(points, include, profiles)).first;
        return it->second;
    };
    for (std::size_t i = 0; i < points.size(); ++i) {
        Point& p = points[i];
        if (!p.out.usable) continue;
        p.out.fitted = predict(p, full);
        if (!in.held_out) {
            p.out.loo = p.out.loso = p.out.fitted;
            continue;
        }
        // Leave the run out: the point and its twins (the same run's other statistics and metrics).
        std::vector<bool> without_run(points.size(), true);
        for (std::size_t j = 0; j < points.size(); ++j) without_run[j] = points[j].run_key != p.run_key;
        p.out.loo = predict(p, fit_without(without_run));
        std::vector<bool> other_sources(points.size(), true);
        for (std::size_t j = 0; j < points.size(); ++j) other_sources[j] = points[j].out.source_key != p.out.source_key;
        p.out.loso = predict(p, fit_without(other_sources));
    }
    for (Point& p : points) {
        report.points.push_back(p.out);
        const PricedPoint& o = p.out;
        if (o.usable)
            report.parameters.points.push_back({o.id, metric_name(o.metric), o.engine, o.engine_version, o.family, o.gpu, o.arch, o.model,
                                                o.model_type, o.scheme, o.batch, o.input_tokens, o.output_tokens, o.measured, o.fitted, o.loo});
    }

    // Summaries: per metric x engine x family, per metric, per figure class.
    std::map<std::tuple<std::string, std::string, std::string>, std::vector<const PricedPoint*>> groups;
    for (const PricedPoint& p : report.points) {
        if (!p.usable) continue;
        groups[{metric_name(p.metric), p.engine, p.family}].push_back(&p);
        groups[{metric_name(p.metric), "*", "*"}].push_back(&p);
        groups[{std::string("class:") + engine::figure_class_name(p.figure), "*", "*"}].push_back(&p);
    }
    for (const auto& [key, v] : groups) {
        ErrorSummary s;
        std::tie(s.metric, s.engine, s.family) = key;
        s.points = static_cast<std::int64_t>(v.size());
        std::vector<double> ef, el, es;
        for (const PricedPoint* p : v) {
            ef.push_back(std::abs(p->error_fitted()));
            el.push_back(std::abs(p->error_loo()));
            es.push_back(std::abs(p->error_loso()));
        }
        s.median_fitted = quantile(ef, 0.5), s.p90_fitted = quantile(ef, 0.9);
        s.median_loo = quantile(el, 0.5), s.p90_loo = quantile(el, 0.9);
        s.median_loso = quantile(es, 0.5), s.p90_loso = quantile(es, 0.9);
        report.summaries.push_back(s);
    }

    // Bands: p10-p90 of the leave-one-out errors per engine x family x class, engine x class, class.
    std::map<std::tuple<std::string, std::string, FigureClass>, std::vector<double>> band_errors;
    for (const PricedPoint& p : report.points) {
        if (!p.usable || p.figure == FigureClass::Kernel || p.figure == FigureClass::Other) continue;
        const double e = p.error_loo();
        band_errors[{p.engine, p.family, p.figure}].push_back(e);
        band_errors[{p.engine, "*", p.figure}].push_back(e);
        band_errors[{"*", "*", p.figure}].push_back(e);
    }
    for (const auto& [key, v] : band_errors) {
        engine::Band b;
        std::tie(b.engine, b.family, b.figure) = key;
        b.p10 = quantile(v, 0.1);
        b.p90 = quantile(v, 0.9);
        b.points = static_cast<std::int64_t>(v.size());
        b.basis = "leave-one-out p10-p90 of " + std::to_string(v.size()) + " " + (b.engine == "*" ? "" : b.engine + " ") +
                  (b.family == "*" ? "" : b.family + " ") + engine::figure_class_name(b.figure) + " points";
        report.parameters.bands.push_back(b);
    }
    return report;
}

}  // namespace quantplan::fidelity
