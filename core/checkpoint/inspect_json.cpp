#include "core/checkpoint/inspect_json.h"

namespace quantplan {
namespace {

using nlohmann::json;

const char* match_kind_name(MatchKind k) {
    switch (k) {
        case MatchKind::Exact: return "exact";
        case MatchKind::Substring: return "substring";
        case MatchKind::PathPrefix: return "path_prefix";
        case MatchKind::Glob: return "glob";
        case MatchKind::Regex: return "regex";
        case MatchKind::ClassName: return "class";
    }
    return "exact";
}

json matchers_json(const std::vector<ModuleMatcher>& ms) {
    json a = json::array();
    for (const ModuleMatcher& m : ms) a.push_back({{"kind", match_kind_name(m.kind)}, {"text", m.text}});
    return a;
}

json bytes_json(const TensorBytes& b) {
    return {{"payload_bytes", b.payload_bytes},
            {"scale_bytes", b.scale_bytes},
            {"zero_point_bytes", b.zero_point_bytes},
            {"aux_bytes", b.aux_bytes},
            {"total_bytes", b.total_bytes()}};
}

}  // namespace

json to_json(const EngineResolution& r) {
    json j;
    j["engine"] = r.snapshot ? r.snapshot->engine : "";
    j["snapshot"] = r.snapshot ? r.snapshot->id : "";
    j["stamp"] = r.snapshot ? r.snapshot->stamp() : "";
    j["registered"] = r.registered;
    j["resolved_method"] = r.resolved_method;
    j["scheme"] = r.scheme;
    j["kernel"] = r.kernel;
    j["kernel_class"] = kernel_class_name(r.kernel_class);
    j["kernel_verified"] = r.kernel_verified;
    j["optimized"] = r.optimized ? json(*r.optimized) : json(nullptr);
    j["refused"] = r.refused;
    j["errors"] = r.errors;
    j["warnings"] = r.warnings;
    j["notes"] = r.notes;
    j["sources"] = r.sources;
    return j;
}

json to_json(const QuantizationConfig& q) {
    json j;
    j["declared_method"] = q.declared_method;
    j["method"] = quant_method_name(q.method);
    j["source"] = q.source;
    j["model_dtype"] = std::string(dtype_name(q.model_dtype));
    j["problem"] = q.problem;
    json rules = json::array();
    for (const QuantRule& r : q.rules) {
        rules.push_back({{"name", r.name},
                         {"skip", r.skip},
                         {"targets", matchers_json(r.targets)},
                         {"format", r.format},
                         {"scheme", r.skip ? std::string() : scheme_name(r.scheme)},
                         {"description", r.description}});
    }
    j["rules"] = rules;
    j["ignore"] = matchers_json(q.ignore);
    json eligible = json::array();
    for (std::size_t i = 0; i < q.eligible.size(); ++i)
        if (q.eligible[i]) eligible.push_back(tensor_role_name(static_cast<TensorRole>(i)));
    j["eligible_roles"] = eligible;
    if (q.kv_cache) {
        const KvCacheDeclaration& k = *q.kv_cache;
        j["kv_cache"] = {{"type", k.type},
                         {"num_bits", k.num_bits},
                         {"strategy", k.strategy},
                         {"symmetric", k.symmetric},
                         {"dynamic", k.dynamic},
                         {"scale_dtype", std::string(dtype_name(k.scale_dtype))},
                         {"format", k.format ? json(kv_format_name(*k.format)) : json(nullptr)}};
    } else {
        j["kv_cache"] = nullptr;
    }
    const MethodFacts& f = q.facts;
    j["facts"] = {{"bits", f.bits},
                  {"group_size", f.group_size},
                  {"symmetric", f.symmetric},
                  {"zero_point", f.zero_point},
                  {"desc_act", f.desc_act},
                  {"weight_float", f.weight_float},
                  {"block", f.block},
                  {"activation", f.activation},
                  {"activation_static", f.activation_static},
                  {"version", f.version},
                  {"checkpoint_format", f.checkpoint_format},
                  {"format", f.format},
                  {"quant_algo", f.quant_algo}};
    j["notes"] = q.notes;
    return j;
}

json inspect_json(const InspectReport& r) {
    json j;
    j["schema_version"] = kInspectSchemaVersion;
    j["path"] = r.path;
    if (r.model) {
        const ModelConfig& m = *r.model;
        j["model"] = {{"model_type", m.model_type},
                      {"hidden_size", m.hidden_size},
                      {"num_layers", m.num_layers},
                      {"num_attention_heads", m.num_attention_heads},
                      {"num_kv_heads", m.num_kv_heads},
                      {"head_dim", m.head_dim},
                      {"intermediate_size", m.intermediate_size},
                      {"vocab_size", m.vocab_size},
                      {"num_experts", m.num_experts},
                      {"tie_word_embeddings", m.tie_word_embeddings}};
    } else {
        j["model"] = nullptr;
    }
    j["model_dtype"] = std::string(dtype_name(r.model_dtype));
    j["quantization"] = r.quantization_parsed ? to_json(r.quantization) : json(nullptr);

    json files = json::array();
    for (const CheckpointFile& f : r.files) {
        json e{{"file", f.name}, {"file_bytes", f.file_bytes}, {"error", f.error}};
        if (f.header) {
            e["header_bytes"] = f.header->overhead_bytes();
            e["data_bytes"] = f.header->data_bytes();
            e["tensors"] = f.header->tensors.size();
            e["metadata"] = f.header->metadata;
        }
        files.push_back(std::move(e));
    }
    j["files"] = files;

    json tensors = json::array();
    for (const StoredTensor& t : r.tensors) {
        tensors.push_back({{"name", t.name},
                           {"file", t.file},
                           {"dtype", std::string(safetensors_dtype_name(t.dtype))},
                           {"shape", t.shape},
                           {"bytes", t.bytes},
                           {"role", t.role},
                           {"logical", t.logical ? json(r.logical[*t.logical].name) : json(nullptr)},
                           {"component", tensor_component_name(t.component)}});
    }
    j["tensors"] = tensors;

    json logical = json::array();
    for (const LogicalTensor& l : r.logical) {
        json e{{"name", l.name},
               {"role", l.kv_scales ? "kv_cache" : tensor_role_name(l.role)},
               {"layer", l.layer},
               {"shape", l.shape},
               {"quantized", l.quantized},
               {"scheme", l.scheme},
               {"rule", l.rule},
               {"predicted", bytes_json(l.predicted)}};
        if (r.compared) {
            e["actual"] = bytes_json(l.actual);
            e["difference_bytes"] = l.difference_bytes();
            e["present"] = !l.stored.empty();
        }
        logical.push_back(std::move(e));
    }
    j["logical_tensors"] = logical;

    json rules = json::array();
    for (const RuleUse& u : r.rule_uses) {
        json roles = json::object();
        for (const auto& [role, n] : u.roles) roles[role] = n;
        rules.push_back({{"rule", u.rule}, {"scheme", u.scheme}, {"description", u.description}, {"modules_by_role", roles}});
    }
    j["schemes"] = rules;

    json roles = json::array();
    for (const RoleBytes& rb : r.roles) {
        json e{{"role", rb.role}, {"predicted_bytes", rb.predicted_bytes}};
        if (r.compared) {
            e["actual_bytes"] = rb.actual_bytes;
            e["difference_bytes"] = static_cast<std::int64_t>(rb.actual_bytes) - static_cast<std::int64_t>(rb.predicted_bytes);
        }
        roles.push_back(std::move(e));
    }
    j["roles"] = roles;

    json totals{{"predicted_tensor_bytes", r.predicted_bytes}, {"compared", r.compared}};
    if (r.compared) {
        totals["actual_tensor_bytes"] = r.actual_bytes;
        totals["difference_bytes"] = r.difference_bytes();
        totals["header_bytes"] = r.header_bytes;
        totals["file_bytes"] = r.file_bytes;
        totals["predicted_file_bytes"] = r.predicted_bytes + r.header_bytes;
        totals["tolerance_bytes"] = r.tolerance_bytes;
    }
    totals["index_total_size_bytes"] = r.index_total_size_bytes ? json(*r.index_total_size_bytes) : json(nullptr);
    j["totals"] = totals;

    json mismatches = json::array();
    for (const Mismatch& m : r.mismatches)
        mismatches.push_back({{"level", m.level},
                              {"name", m.name},
                              {"predicted_bytes", m.predicted_bytes},
                              {"actual_bytes", m.actual_bytes},
                              {"difference_bytes", m.difference_bytes()},
                              {"detail", m.detail}});
    j["mismatches"] = mismatches;
    j["unexpected_tensors"] = r.unexpected;
    j["missing_tensors"] = r.missing;

    json engines = json::array();
    for (const EngineResolution& e : r.engines) engines.push_back(to_json(e));
    j["engines"] = {{"gpu", r.engine_gpu}, {"resolutions", engines}};
    if (r.engine_query) {
        const EngineQuery& q = *r.engine_query;
        j["engines"]["query"] = {{"method", q.method},   {"bits", q.bits},         {"group_size", q.group_size},
                                 {"symmetric", q.symmetric}, {"zero_point", q.zero_point}, {"weight_float", q.weight_float},
                                 {"block", q.block},     {"activation", q.activation}, {"activation_static", q.activation_static},
                                 {"kv_format", q.kv_format}, {"n", q.n},           {"k", q.k}};
    }
    j["errors"] = r.errors;
    j["warnings"] = r.warnings;
    j["notes"] = r.notes;
    return j;
}

}  // namespace quantplan
