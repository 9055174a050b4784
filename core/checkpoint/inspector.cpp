#include "core/checkpoint/inspector.h"

#include <algorithm>
#include <cstring>
#include <tuple>
#include <array>
#include <fstream>
#include <map>
#include <sstream>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/base/json_guard.h"
#include "core/checkpoint/model_config_json.h"

namespace quantplan {
namespace {

// Reads a small text file of at most `max_bytes`; nullopt when absent, Error when unreadable or larger.
std::optional<std::string> read_small_file(const std::filesystem::path& path, std::uint64_t max_bytes) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) return std::nullopt;
    if (!std::filesystem::is_regular_file(path, ec)) throw Error(path.string(), "is not a regular file");
    const std::uintmax_t size = std::filesystem::file_size(path, ec);
    if (ec) throw Error(path.string(), "cannot read: " + ec.message());
    if (size > max_bytes) throw Error(path.string(), "is " + std::to_string(size) + " bytes, more than the " + std::to_string(max_bytes) + " read");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(path.string(), "cannot open");
    std::string text(static_cast<std::size_t>(size), '\0');
    in.read(text.data(), static_cast<std::streamsize>(size));
    text.resize(static_cast<std::size_t>(in.gcount()));
    return text;
}

CheckpointFile read_file_header(const std::filesystem::path& path) {
    CheckpointFile f;
    f.name = path.filename().string();
    std::error_code ec;
    f.file_bytes = std::filesystem::file_size(path, ec);
    try {
        f.header = read_safetensors_header(path);
    } catch (const Error& e) {
        f.error = e.what();
    }
    return f;
}

// Stored-name suffixes of quantized linears and the part of the linear each is.
struct SuffixRule {
    std::string_view suffix;
    TensorComponent component;
};
constexpr std::array<SuffixRule, 25> kSuffixes{{
    {".weight.quant_state.bitsandbytes__nf4", TensorComponent::Aux},
    {".weight.quant_state.bitsandbytes__fp4", TensorComponent::Aux},
    {".weight.nested_quant_map", TensorComponent::Aux},
    {".weight.nested_absmax", TensorComponent::Scale},
    {".weight_global_scale", TensorComponent::Scale},
    {".input_global_scale", TensorComponent::Aux},
    {".weight_zero_point", TensorComponent::ZeroPoint},
    {".weight.quant_map", TensorComponent::Aux},
    {".input_zero_point", TensorComponent::Aux},
    {".weight_scale_inv", TensorComponent::Scale},
    {".weight.absmax", TensorComponent::Scale},
    {".weight_scale_2", TensorComponent::Scale},
    {".weight_packed", TensorComponent::Payload},
    {".weight_format", TensorComponent::Aux},
    {".weight_g_idx", TensorComponent::Aux},
    {".weight_scale", TensorComponent::Scale},
    {".weight_shape", TensorComponent::Aux},
    {".input_scale", TensorComponent::Aux},
    {".qweight", TensorComponent::Payload},
    {".qzeros", TensorComponent::ZeroPoint},
    {".scales", TensorComponent::Scale},
    {".g_idx", TensorComponent::Aux},
    {".weight", TensorComponent::Payload},
    {".SCB", TensorComponent::Scale},
    {".bias", TensorComponent::Aux},
}};

// KV-cache scale suffixes (compressed-tensors self_attn.k_scale, ModelOpt self_attn.k_proj.k_scale).
constexpr std::array<std::string_view, 3> kKvSuffixes{".k_scale", ".v_scale", ".kv_scale"};

// The decoder layer a name belongs to ("model.layers.12.mlp..." -> 12), or -1.
std::int64_t layer_of(std::string_view name) {
    const std::string_view key = "layers.";
    const std::size_t p = name.find(key);
    if (p == std::string_view::npos) return -1;
    std::int64_t v = 0;
    std::size_t i = p + key.size();
    if (i >= name.size() || !std::isdigit(static_cast<unsigned char>(name[i]))) return -1;
    for (; i < name.size() && std::isdigit(static_cast<unsigned char>(name[i])) && v < 1'000'000; ++i) v = v * 10 + (name[i] - '0');
    return v;
}

void add_component(TensorBytes& b, TensorComponent c, std::uint64_t bytes) {
    switch (c) {
        case TensorComponent::Payload: b.payload_bytes += bytes; break;
        case TensorComponent::Scale: b.scale_bytes += bytes; break;
        case TensorComponent::ZeroPoint: b.zero_point_bytes += bytes; break;
        case TensorComponent::Aux:
        case TensorComponent::KvScale: b.aux_bytes += bytes; break;
        case TensorComponent::Unmatched: break;
    }
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
    std::string s = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

std::uint64_t absdiff(std::uint64_t a, std::uint64_t b) { return a > b ? a - b : b - a; }

// Words for what differs between a logical tensor's prediction and its stored tensors.
std::string mismatch_detail(const LogicalTensor& l, const std::vector<StoredTensor>& tensors) {
    if (l.stored.empty()) return "missing: predicted " + l.scheme + ", not in the checkpoint";
    std::string d;
    const auto part = [&](const char* what, std::uint64_t p, std::uint64_t a, std::initializer_list<TensorComponent> comps) {
        if (p == a) return;
        std::string found;
        for (std::size_t i : l.stored)
            for (TensorComponent c : comps)
                if (tensors[i].component == c)
                    found += (found.empty() ? "" : ", ") + tensors[i].name.substr(tensors[i].name.rfind('.') == std::string::npos ? 0 : tensors[i].name.rfind('.') + 1) +
                             " " + std::string(safetensors_dtype_name(tensors[i].dtype)) + " " + shape_text(tensors[i].shape);
        d += (d.empty() ? "" : "; ") + std::string(what) + " predicted " + std::to_string(p) + " B, found " + std::to_string(a) + " B" +
             (found.empty() ? "" : " (" + found + ")");
    };
    part("payload", l.predicted.payload_bytes, l.actual.payload_bytes, {TensorComponent::Payload});
    part("scales", l.predicted.scale_bytes, l.actual.scale_bytes, {TensorComponent::Scale});
    part("zero points", l.predicted.zero_point_bytes, l.actual.zero_point_bytes, {TensorComponent::ZeroPoint});
    part("auxiliary", l.predicted.aux_bytes, l.actual.aux_bytes, {TensorComponent::Aux, TensorComponent::KvScale});
    return "predicted " + l.scheme + ": " + d;
}

// Reads model.safetensors.index.json and checks it against the files read.
void check_index(const CheckpointInput& in, InspectReport& r, const std::unordered_map<std::string, std::size_t>& stored_by_name) {
    if (!in.index_json) return;
    const std::string source = "model.safetensors.index.json";
    nlohmann::json idx;
    try {
        idx = parse_untrusted_json(*in.index_json, source);
    } catch (const Error& e) {
        r.errors.push_back(e.what());
        return;
    }
    if (!idx.is_object()) {
        r.errors.push_back(source + ": must be a JSON object");
        return;
    }
    if (const auto meta = idx.find("metadata"); meta != idx.end() && meta->is_object()) {
        const auto ts = meta->find("total_size");
        if (ts != meta->end() && (ts->is_number_unsigned() || (ts->is_number_integer() && ts->get<std::int64_t>() >= 0)))
            r.index_total_size_bytes = ts->get<std::uint64_t>();
        else if (ts != meta->end() && ts->is_number_float() && ts->get<double>() >= 0 && ts->get<double>() < 1.8e19)
            r.index_total_size_bytes = static_cast<std::uint64_t>(ts->get<double>());
    }
    const auto wm = idx.find("weight_map");
    if (wm == idx.end() || !wm->is_object()) {
        r.errors.push_back(source + ": weight_map is missing or not an object");
        return;
    }
    std::map<std::string, bool> files_ok;
    for (const CheckpointFile& f : r.files) files_ok[f.name] = f.header.has_value();
    std::size_t absent = 0, misplaced = 0;
    std::string first_absent, first_misplaced;
    std::map<std::string, bool> reported_files;
    for (auto it = wm->begin(); it != wm->end(); ++it) {
        if (!it->is_string()) {
            r.errors.push_back(source + ": weight_map value of '" + clip_text(it.key(), 80) + "' is not a file name");
            return;
        }
        const std::string file = it->get<std::string>();
        const auto f = files_ok.find(file);
        if (f == files_ok.end()) {
            if (!reported_files[file]) r.errors.push_back(source + ": names " + clip_text(file, 120) + ", which is not in the folder");
            reported_files[file] = true;
            continue;
        }
        if (!f->second) continue;  // the file's own error is reported
        const auto s = stored_by_name.find(it.key());
        if (s == stored_by_name.end()) {
            if (absent++ == 0) first_absent = it.key();
        } else if (r.tensors[s->second].file != file) {
            if (misplaced++ == 0) first_misplaced = it.key();
        }
    }
    if (absent > 0)
        r.errors.push_back(source + ": " + std::to_string(absent) + " tensor(s) of the weight_map are in no file, e.g. '" + clip_text(first_absent, 120) + "'");
    if (misplaced > 0)
        r.warnings.push_back(source + ": " + std::to_string(misplaced) + " tensor(s) are in another file than the weight_map says, e.g. '" + clip_text(first_misplaced, 120) + "'");
    std::size_t unindexed = 0;
    for (const StoredTensor& t : r.tensors)
        if (wm->find(t.name) == wm->end()) ++unindexed;
    if (unindexed > 0) r.warnings.push_back(source + ": " + std::to_string(unindexed) + " stored tensor(s) are not in the weight_map");
    if (r.index_total_size_bytes && *r.index_total_size_bytes != r.actual_bytes)
        r.warnings.push_back(source + ": metadata.total_size is " + std::to_string(*r.index_total_size_bytes) + " bytes, the tensors hold " +
                             std::to_string(r.actual_bytes));
}

}  // namespace

const char* tensor_component_name(TensorComponent c) {
    switch (c) {
        case TensorComponent::Payload: return "payload";
        case TensorComponent::Scale: return "scale";
        case TensorComponent::ZeroPoint: return "zero_point";
        case TensorComponent::Aux: return "aux";
        case TensorComponent::KvScale: return "kv_scale";
        case TensorComponent::Unmatched: return "unmatched";
    }
    return "unmatched";
}

CheckpointInput read_checkpoint(const std::filesystem::path& path) {
    CheckpointInput in;
    in.path = path.string();
    std::error_code ec;
    const auto small = [&](const std::filesystem::path& p, std::optional<std::string>& out, std::uint64_t max) {
        try {
            out = read_small_file(p, max);
        } catch (const Error& e) {
            in.read_errors.push_back(e.what());
        }
    };
    if (std::filesystem::is_directory(path, ec)) {
        small(path / "config.json", in.config_json, kMaxCheckpointConfigBytes);
        small(path / "hf_quant_config.json", in.hf_quant_config, kMaxCheckpointConfigBytes);
        small(path / "quant_config.json", in.quant_config, kMaxCheckpointConfigBytes);
        small(path / "quantize_config.json", in.quantize_config, kMaxCheckpointConfigBytes);
        small(path / "model.safetensors.index.json", in.index_json, kMaxIndexBytes);
        std::vector<std::filesystem::path> files;
        for (const auto& e : std::filesystem::directory_iterator(path, ec)) {
            if (e.path().extension() != ".safetensors") continue;
            if (files.size() >= kMaxCheckpointFiles) {
                in.read_errors.push_back(in.path + ": more than " + std::to_string(kMaxCheckpointFiles) + " .safetensors files; the rest are not read");
                break;
            }
            files.push_back(e.path());
        }
        if (ec) throw Error(in.path, "cannot list the folder: " + ec.message());
        std::sort(files.begin(), files.end());
        for (const auto& f : files) in.files.push_back(read_file_header(f));
        return in;
    }
    if (!std::filesystem::exists(path, ec)) throw Error(in.path, "no such file or folder");
    if (path.extension() == ".safetensors") {
        in.files.push_back(read_file_header(path));
        return in;
    }
    if (path.extension() == ".json") {
        small(path, in.config_json, kMaxCheckpointConfigBytes);
        return in;
    }
    throw Error(in.path, "not a checkpoint folder, a config.json or a .safetensors file");
}

// gpt-oss stores each projection of all a layer's experts as one tensor: gate_up_proj_blocks /
// _scales (MXFP4) or gate_up_proj (bf16) and gate_up_proj_bias, the same for down_proj
// (reference checkpoint-formats.md §7). Its bytes are shared evenly by the per-expert logical
// tensors of the inventory. False when `s` is not such a tensor.
bool fused_experts(InspectReport& r, StoredTensor& s, std::size_t index, const std::unordered_map<std::string, std::size_t>& logical_by_name) {
    // gpt-oss: model.layers.N.mlp.experts.gate_up_proj_blocks; Llama 4:
    // language_model.model.layers.N.feed_forward.experts.gate_up_proj.
    const std::string experts_part = r.model->llama4_moe ? ".feed_forward.experts." : ".mlp.experts.";
    const std::size_t at = s.name.find(experts_part);
    if (at == std::string::npos) return false;
    const std::string prefix = s.name.substr(0, at + experts_part.size());
    std::string rest = s.name.substr(at + experts_part.size());
    TensorComponent comp = TensorComponent::Payload;
    std::string suffix = ".weight";
    for (const auto& [tail, c, logical] : {std::tuple<const char*, TensorComponent, const char*>{"_blocks", TensorComponent::Payload, ".weight"},
                                          {"_scales", TensorComponent::Scale, ".weight"},
                                          {"_bias", TensorComponent::Payload, ".bias"}}) {
        if (rest.size() > std::strlen(tail) && rest.ends_with(tail)) {
            rest.resize(rest.size() - std::strlen(tail));
            comp = c;
            suffix = logical;
            break;
        }
    }
    if (rest != "gate_up_proj" && rest != "down_proj") return false;
    const std::int64_t experts = r.model->num_experts;
    std::vector<std::size_t> targets;
    for (std::int64_t e = 0; e < experts; ++e) {
        const auto it = logical_by_name.find(prefix + std::to_string(e) + "." + rest + suffix);
        if (it == logical_by_name.end()) return false;
        targets.push_back(it->second);
    }
    s.logical = targets.front();
    s.component = comp;
    s.role = tensor_role_name(r.logical[targets.front()].role);
    const std::uint64_t share = s.bytes / static_cast<std::uint64_t>(experts);
    for (std::size_t k = 0; k < targets.size(); ++k) {
        LogicalTensor& l = r.logical[targets[k]];
        l.stored.push_back(index);
        add_component(l.actual, comp, k + 1 == targets.size() ? s.bytes - share * (targets.size() - 1) : share);
    }
    return true;
}

InspectReport inspect_checkpoint(const CheckpointInput& in, const InspectOptions& options) {
    InspectReport r;
    r.path = in.path;
    r.errors = in.read_errors;

    // What the checkpoint declares.
    r.has_config = in.config_json.has_value();
    if (in.config_json) {
        try {
            // The nesting bound first: a hostile config.json is refused before any value is built.
            parse_untrusted_json(null_python_literals(*in.config_json), "config.json");
            r.model = parse_model_config(*in.config_json, "config.json");
        } catch (const Error& e) {
            r.errors.push_back(e.what());
        }
        r.model_dtype = declared_model_dtype(*in.config_json);
    } else if (!in.files.empty()) {
        r.warnings.push_back("no config.json: the tensors are listed without a prediction");
    }
    try {
        QuantConfigTexts texts;
        texts.config_json = in.config_json;
        texts.hf_quant_config = in.hf_quant_config;
        texts.quant_config = in.quant_config;
        texts.quantize_config = in.quantize_config;
        r.quantization = parse_quantization_config(texts);
        r.quantization_parsed = true;
        if (!r.quantization.problem.empty()) r.warnings.push_back(r.quantization.problem);
        for (const std::string& n : r.quantization.notes) r.notes.push_back(n);
    } catch (const Error& e) {
        r.errors.push_back(std::string(e.what()) + " (tensors are predicted unquantized)");
        r.quantization = QuantizationConfig{};
        r.quantization.model_dtype = r.model_dtype;
    }
    r.model_dtype = r.quantization.model_dtype;

    // What it holds.
    r.files = in.files;
    std::unordered_map<std::string, std::size_t> stored_by_name;
    for (const CheckpointFile& f : r.files) {
        if (!f.header) {
            r.errors.push_back(f.error);
            continue;
        }
        r.compared = true;
        r.header_bytes += f.header->overhead_bytes();
        r.file_bytes += f.header->file_bytes;
        for (const SafetensorsTensor& t : f.header->tensors) {
            if (const auto dup = stored_by_name.find(t.name); dup != stored_by_name.end()) {
                r.errors.push_back(f.name + ": tensor '" + clip_text(t.name, 120) + "' is also in " + r.tensors[dup->second].file);
                continue;
            }
            StoredTensor s;
            s.name = t.name;
            s.file = f.name;
            s.dtype = t.dtype;
            s.shape = t.shape;
            s.bytes = t.byte_count();
            s.role = "other";
            stored_by_name.emplace(s.name, r.tensors.size());
            r.actual_bytes += s.bytes;
            r.tensors.push_back(std::move(s));
        }
    }
    r.tolerance_bytes = r.header_bytes;

    // The prediction: every tensor of the architecture, quantized as the config says.
    std::unordered_map<std::string, std::size_t> logical_by_name, logical_by_module;
    if (r.model) {
        // Tensors per layer: attention (4 + 3 biases + 2 qk norms + 2 norms), a dense MLP (3) or the
        // experts (3 each), a router and a shared expert (4).
        const std::int64_t per_layer = 16 + 3 * std::max<std::int64_t>(1, r.model->num_experts);
        if (r.model->num_layers * per_layer > kMaxInventoryTensors) {
            r.errors.push_back("config.json: declares about " + std::to_string(r.model->num_layers * per_layer) + " tensors, more than the " +
                               std::to_string(kMaxInventoryTensors) + " the inspector predicts");
            r.model.reset();
        }
    }
    if (r.model) {
        for (TensorInfo& t : tensor_inventory(*r.model)) {
            LogicalTensor l;
            l.name = t.name;
            l.role = t.role;
            l.layer = t.layer;
            l.shape = t.shape;
            const bool linear = t.is_linear() && t.shape.size() == 2 && t.name.size() > 7 && t.name.ends_with(".weight");
            if (linear) l.module = t.name.substr(0, t.name.size() - 7);
            const QuantRule* rule = tensor_rule(r.quantization, t);
            if (t.fixed_dtype) {
                l.scheme = std::string(dtype_name(*t.fixed_dtype));
                l.predicted.payload_bytes = unquantized_bytes(*t.fixed_dtype, t.elements());
            } else if (rule) {
                l.quantized = true;
                l.rule = rule->name;
                l.scheme = scheme_name(rule->scheme);
                l.predicted = quantized_tensor_bytes(rule->scheme, t.shape[0], t.shape[1]);
            } else {
                l.scheme = std::string(dtype_name(r.model_dtype));
                l.predicted.payload_bytes = unquantized_bytes(r.model_dtype, t.elements());
            }
            logical_by_name.emplace(l.name, r.logical.size());
            if (!l.module.empty()) logical_by_module.emplace(l.module, r.logical.size());
            r.logical.push_back(std::move(l));
        }
        // One k_scale / v_scale pair per attention layer when the config declares a quantized KV cache.
        if (r.quantization.kv_cache) {
            const KvCacheDeclaration& kv = *r.quantization.kv_cache;
            const std::uint64_t per_scale = unquantized_bytes(kv.scale_dtype, kv.strategy == "attn_head" ? r.model->num_kv_heads : 1);
            for (std::int64_t layer = 0; layer < r.model->num_layers; ++layer) {
                LogicalTensor l;
                l.name = "model.layers." + std::to_string(layer) + ".self_attn (k_scale, v_scale)";
                l.role = TensorRole::AttentionLinear;
                l.kv_scales = true;
                l.layer = layer;
                l.scheme = "kv " + std::string(kv.type) + std::to_string(kv.num_bits) + " " + kv.strategy;
                l.predicted.aux_bytes = 2 * per_scale;
                r.logical.push_back(std::move(l));
            }
        }
    }
    std::map<std::int64_t, std::size_t> kv_by_layer;
    for (std::size_t i = 0; i < r.logical.size(); ++i)
        if (r.logical[i].kv_scales) kv_by_layer[r.logical[i].layer] = i;

    // Map every stored tensor back to its logical tensor.
    for (std::size_t i = 0; i < r.tensors.size(); ++i) {
        StoredTensor& s = r.tensors[i];
        std::optional<std::size_t> target;
        TensorComponent comp = TensorComponent::Unmatched;
        if (const auto it = logical_by_name.find(s.name); it != logical_by_name.end()) {
            target = it->second;
            comp = TensorComponent::Payload;
        } else {
            for (const SuffixRule& rule : kSuffixes) {
                if (!std::string_view(s.name).ends_with(rule.suffix)) continue;
                const auto it2 = logical_by_module.find(s.name.substr(0, s.name.size() - rule.suffix.size()));
                if (it2 == logical_by_module.end()) continue;
                target = it2->second;
                comp = rule.component;
                break;
            }
        }
        if (!target) {
            for (std::string_view suffix : kKvSuffixes) {
                if (!std::string_view(s.name).ends_with(suffix) || s.name.find("self_attn") == std::string::npos) continue;
                const std::int64_t layer = layer_of(s.name);
                if (layer < 0 || !r.model || layer >= r.model->num_layers) break;
                auto kv = kv_by_layer.find(layer);
                if (kv == kv_by_layer.end()) {
                    // Scales the config does not declare: predicted 0 bytes, so they show as a difference.
                    LogicalTensor l;
                    l.name = "model.layers." + std::to_string(layer) + ".self_attn (k_scale, v_scale)";
                    l.role = TensorRole::AttentionLinear;
                    l.kv_scales = true;
                    l.layer = layer;
                    l.scheme = "no KV-cache quantization declared";
                    r.logical.push_back(std::move(l));
                    kv = kv_by_layer.emplace(layer, r.logical.size() - 1).first;
                }
                target = kv->second;
                comp = TensorComponent::KvScale;
                break;
            }
        }
        if (!target && r.model && (r.model->gpt_oss_experts || r.model->llama4_moe) && fused_experts(r, s, i, logical_by_name)) continue;
        if (!target) {
            r.unexpected.push_back(s.name);
            continue;
        }
        LogicalTensor& l = r.logical[*target];
        s.logical = target;
        s.component = comp;
        s.role = l.kv_scales ? "kv_cache" : tensor_role_name(l.role);
        l.stored.push_back(i);
        add_component(l.actual, comp, s.bytes);
    }

    // Totals, roles and the rules' use.
    std::vector<std::string> role_order;
    std::map<std::string, RoleBytes> roles;
    const auto role_entry = [&](const std::string& name) -> RoleBytes& {
        if (!roles.count(name)) {
            role_order.push_back(name);
            roles[name].role = name;
        }
        return roles[name];
    };
    std::map<std::string, std::size_t> rule_index;
    for (const LogicalTensor& l : r.logical) {
        r.predicted_bytes += l.predicted.total_bytes();
        const std::string role = l.kv_scales ? "kv_cache" : tensor_role_name(l.role);
        RoleBytes& rb = role_entry(role);
        rb.predicted_bytes += l.predicted.total_bytes();
        rb.actual_bytes += l.actual.total_bytes();
        if (l.kv_scales) continue;
        auto ri = rule_index.find(l.rule);
        if (ri == rule_index.end()) {
            RuleUse u;
            u.rule = l.rule;
            u.scheme = l.scheme;
            for (const QuantRule& q : r.quantization.rules)
                if (q.name == l.rule && l.quantized) u.description = q.description;
            if (!l.quantized) u.description = "stays in " + l.scheme;
            ri = rule_index.emplace(l.rule, r.rule_uses.size()).first;
            r.rule_uses.push_back(std::move(u));
        }
        auto& counts = r.rule_uses[ri->second].roles;
        const auto c = std::find_if(counts.begin(), counts.end(), [&](const auto& p) { return p.first == role; });
        if (c == counts.end()) counts.emplace_back(role, 1);
        else ++c->second;
    }
    for (const StoredTensor& s : r.tensors)
        if (!s.logical) role_entry("other").actual_bytes += s.bytes;
    for (const std::string& name : role_order) r.roles.push_back(roles[name]);

    // Name what differs by more than the header bytes.
    if (r.compared && r.model) {
        for (const LogicalTensor& l : r.logical) {
            if (l.stored.empty()) r.missing.push_back(l.name);
            const std::uint64_t p = l.predicted.total_bytes(), a = l.actual.total_bytes();
            if (absdiff(p, a) > r.tolerance_bytes) r.mismatches.push_back({"tensor", l.name, p, a, mismatch_detail(l, r.tensors)});
        }
        for (const StoredTensor& s : r.tensors)
            if (!s.logical && s.bytes > r.tolerance_bytes)
                r.mismatches.push_back({"tensor", s.name, 0, s.bytes,
                                        "unexpected: " + std::string(safetensors_dtype_name(s.dtype)) + " " + shape_text(s.shape) + " that no prediction accounts for"});
        for (const RoleBytes& rb : r.roles)
            if (absdiff(rb.predicted_bytes, rb.actual_bytes) > r.tolerance_bytes)
                r.mismatches.push_back({"role", rb.role, rb.predicted_bytes, rb.actual_bytes, "the " + rb.role + " tensors differ from the prediction"});
        if (absdiff(r.predicted_bytes, r.actual_bytes) > r.tolerance_bytes)
            r.mismatches.push_back({"total", "checkpoint", r.predicted_bytes, r.actual_bytes,
                                    "the tensors miss the prediction by more than the " + std::to_string(r.tolerance_bytes) + " header bytes: something is not what the config says"});
    }
    check_index(in, r, stored_by_name);

    // What the engines would run.
    if (r.quantization_parsed && r.quantization.method != QuantMethod::None) {
        const MethodFacts& f = r.quantization.facts;
        EngineQuery q;
        q.method = r.quantization.declared_method;
        q.bits = f.bits;
        q.group_size = f.group_size;
        q.symmetric = f.symmetric;
        q.zero_point = f.zero_point;
        q.weight_float = f.weight_float;
        q.block = f.block;
        q.activation = f.activation;
        q.activation_static = f.activation_static;
        q.checkpoint_format = f.checkpoint_format;
        q.quant_algo = f.quant_algo;
        q.kv_format = options.kv_format;
        if (r.quantization.kv_cache && r.quantization.method == QuantMethod::CompressedTensors) {
            q.kv_type = r.quantization.kv_cache->type;
            q.kv_num_bits = r.quantization.kv_cache->num_bits;
            q.kv_strategy = r.quantization.kv_cache->strategy;
            q.kv_symmetric = r.quantization.kv_cache->symmetric;
        }
        for (const LogicalTensor& l : r.logical)
            if (l.quantized) {
                q.n = l.shape[0];
                q.k = l.shape[1];
                break;
            }
        r.engine_query = q;
        const EngineGpu gpu = options.gpu ? engine_gpu(*options.gpu) : EngineGpu{"unknown GPU", true, 0};
        r.engine_gpu = options.gpu ? options.gpu->id : "";
        for (const EngineSnapshot* s : builtin_engine_registry().complete()) r.engines.push_back(resolve_engine(*s, q, gpu));
    }
    return r;
}

}  // namespace quantplan
