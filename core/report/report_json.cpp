#include "core/report/report_json.h"

#include <cmath>

namespace quantplan {

using nlohmann::json;

namespace {

// JSON has no infinity: an unreachable ridge is written as null.
json finite_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

}  // namespace

json to_json(const ParameterCounts& p) {
    return {{"total", p.total},
            {"block_linears", p.block_linears},
            {"block_linear_count", p.block_linear_count},
            {"embedding", p.embedding},
            {"lm_head", p.lm_head},
            {"norms", p.norms},
            {"biases", p.biases},
            {"routers", p.routers},
            {"experts", p.experts},
            {"active_block_linears", p.active_block_linears}};
}

json to_json(const CheckpointBudget& b) {
    json roles = json::object();
    for (const RoleBudget& r : b.by_role)
        roles[tensor_role_name(r.role)] = {{"parameters", r.parameters},
                                           {"payload_bytes", r.payload_bytes},
                                           {"metadata_bytes", r.metadata_bytes},
                                           {"unquantized_bytes", r.unquantized_bytes},
                                           {"total_bytes", r.total_bytes()}};
    json j = {{"checkpoint_bytes", b.checkpoint_bytes},
              {"quantized_payload_bytes", b.quantized_payload_bytes},
              {"metadata_bytes", b.metadata_bytes},
              {"unquantized_bytes", b.unquantized_bytes},
              {"quantized_parameters", b.quantized_parameters},
              {"total_parameters", b.total_parameters},
              {"effective_bits", b.effective_bits},
              {"bf16_bytes", b.bf16_bytes},
              {"compression_vs_bf16", b.compression_vs_bf16},
              {"naive_bytes", b.naive_bytes},
              {"by_role", roles}};
    if (b.speculative_bytes > 0) {  // MTP modules: in the checkpoint, not loaded by a plain server
        j["speculative_bytes"] = b.speculative_bytes;
        j["speculative_parameters"] = b.speculative_parameters;
    }
    if (!b.tensors.empty()) {
        json tensors = json::array();
        for (const TensorBudget& t : b.tensors)
            tensors.push_back({{"name", t.tensor->name},
                               {"shape", t.tensor->shape},
                               {"role", tensor_role_name(t.tensor->role)},
                               {"quantized", t.quantized},
                               {"payload_bytes", t.bytes.payload_bytes},
                               {"scale_bytes", t.bytes.scale_bytes},
                               {"zero_point_bytes", t.bytes.zero_point_bytes},
                               {"aux_bytes", t.bytes.aux_bytes},
                               {"total_bytes", t.bytes.total_bytes()}});
        j["tensors"] = std::move(tensors);
    }
    return j;
}

json to_json(const DecodeStep& d) {
    return {{"batch", d.batch},
            {"context", d.context_tokens},
            {"bytes", {{"weights", d.weight_bytes}, {"kv", d.kv_bytes}, {"activations", d.activation_bytes}, {"total", d.total_bytes()}}},
            {"flops", d.total_flop()},
            {"flops_by_kind", {{"linear", d.linear_flop}, {"attention", d.attention_flop}}},
            {"memory_time_s", d.memory_time_s},
            {"compute_time_s", d.compute_time_s},
            {"communication_time_s", d.communication_time_s},
            {"all_to_all_bytes", d.all_to_all_bytes},
            {"time_s", d.time_s},
            {"bound", bound_name(d.bound)}};
}

json to_json(const Admission& a) {
    json j = {{"usable_memory_bytes", a.usable_memory_bytes},
            {"gpu_memory_utilization", a.gpu_memory_utilization},
            {"engine_memory_bytes", a.engine_memory_bytes},
            {"weight_bytes", a.weight_bytes},
            {"activation_workspace_bytes", a.activation_workspace_bytes},
            {"sampler_workspace_bytes", a.sampler_workspace_bytes},
            {"runtime_overhead_bytes", a.runtime_overhead_bytes},
            {"budget_bytes", a.budget_bytes},
            {"kv_bytes_per_token", a.kv_bytes_per_token},
            {"kv_cache_blocks", a.kv_cache_blocks},
            {"kv_cache_tokens", a.kv_cache_tokens},
            {"max_concurrency", a.max_concurrency},
            {"max_sequences", a.max_sequences},
            {"fits", a.fits},
            {"reason", a.reason},
            {"kv_block_tokens", a.kv_block_tokens}};
    if (a.state_bytes_per_sequence > 0) j["state_bytes_per_sequence"] = a.state_bytes_per_sequence;
    return j;
}

json to_json(const PrefillResult& p) {
    return {{"prompt_tokens", p.prompt_tokens}, {"chunk_tokens", p.chunk_tokens}, {"chunks", p.chunks},
            {"flops", p.flop},                  {"bytes", p.bytes},               {"time_to_first_token_s", p.time_s},
            {"bound", bound_name(p.bound)}};
}

json to_json(const Crossover& c) {
    return {{"schemes", {c.scheme_a, c.scheme_b}}, {"batch", c.batch}, {"faster_below", c.faster_below}, {"faster_above", c.faster_above}};
}

json to_json(const Decision& d) {
    json ranking = json::array();
    for (const RankedScheme& r : d.ranking)
        ranking.push_back({{"scheme", r.scheme}, {"value", r.value}, {"vetoed", r.vetoed}, {"reasons", r.reasons}});
    return {{"regime", d.regime}, {"recommendation", d.recommendation}, {"ranking", ranking}, {"reasons", d.reasons}, {"warnings", d.warnings}};
}

json to_json(const GpuProfile& g) {
    return {{"id", g.id},
            {"name", g.name},
            {"memory_spec_bytes", g.memory_spec_bytes},
            {"memory_usable_bytes", g.memory_usable_bytes},
            {"memory_bandwidth_bytes_per_s", g.memory_bandwidth_bytes_per_s},
            {"bf16_flop_per_s", g.peak.bf16_fp32acc_flop_per_s},
            {"fp8_flop_per_s", g.peak.fp8_fp32acc_flop_per_s},
            {"int8_op_per_s", g.peak.int8_op_per_s},
            {"fp4_flop_per_s", g.peak.fp4_flop_per_s},
            {"compute_capability", g.compute_capability}};
}

json to_json(const EfficiencyProfile& e) {
    return {{"name", e.name},
            {"bandwidth_efficiency", e.bandwidth_efficiency},
            {"compute_efficiency", e.compute_efficiency},
            {"fused_kernel_efficiency", e.fused_kernel_efficiency},
            {"generic_kernel_efficiency", e.generic_kernel_efficiency}};
}

json model_json(const ModelConfig& m, const ParameterCounts& p) {
    json j = {{"name", m.name},
              {"model_type", m.model_type},
              {"hidden_size", m.hidden_size},
              {"intermediate_size", m.intermediate_size},
              {"num_layers", m.num_layers},
              {"num_attention_heads", m.num_attention_heads},
              {"num_kv_heads", m.num_kv_heads},
              {"head_dim", m.head_dim},
              {"vocab_size", m.vocab_size},
              {"tie_word_embeddings", m.tie_word_embeddings},
              {"parameters", to_json(p)}};
    if (m.is_moe())
        j["moe"] = {{"num_experts", m.num_experts},
                    {"experts_per_token", m.experts_per_token},
                    {"moe_intermediate_size", m.moe_intermediate_size},
                    {"shared_expert_intermediate_size", m.shared_expert_intermediate_size}};
    if (m.is_mla())
        j["mla"] = {{"q_lora_rank", m.q_lora_rank},
                    {"kv_lora_rank", m.kv_lora_rank},
                    {"qk_nope_head_dim", m.qk_nope_head_dim},
                    {"qk_rope_head_dim", m.qk_rope_head_dim},
                    {"v_head_dim", m.v_head_dim},
                    {"cache_values_per_token_per_layer", m.cache_values_per_token_per_layer()}};
    if (m.mtp_layers > 0 || m.qwen3_next_mtp) {
        j["mtp_layers"] = m.qwen3_next_mtp ? std::int64_t{1} : m.mtp_layers;
        j["parameters"]["speculative"] = p.speculative;
    }
    if (m.linear_attention_layer_count() > 0) j["linear_attention_layers"] = m.linear_attention_layer_count();
    if (m.has_vision()) {  // a vision encoder beside the language model (Gemma 3's SigLIP tower)
        j["vision"] = {{"kind", m.vision_qwen3_vl ? "qwen3_vl" : m.vision_llama4 ? "llama4" : "siglip"},
                       {"hidden_size", m.vision_hidden_size},
                       {"intermediate_size", m.vision_intermediate_size},
                       {"num_layers", m.vision_layers},
                       {"image_size", m.vision_image_size},
                       {"patch_size", m.vision_patch_size}};
        j["parameters"]["vision"] = p.vision;
    }
    if (m.sliding_layer_count() > 0) {
        j["sliding_window"] = m.sliding_window;
        j["sliding_layers"] = m.sliding_layer_count();
        j["sliding_window_model_wide"] = m.sliding_window_model_wide;
    }
    if (m.chunked_layer_count() > 0) {
        j["attention_chunk_size"] = m.attention_chunk_size;
        j["chunked_layers"] = m.chunked_layer_count();
    }
    if (m.is_hybrid_stack()) {
        j["mamba_layers"] = m.mamba_layer_count();
        j["attention_layers"] = m.attention_layer_count();
        j["mlp_layers"] = m.mlp_layer_count();
    }
    if (!m.not_counted.empty()) j["not_counted"] = m.not_counted;
    return j;
}

json scheme_json(const SchemeResult& r) {
    const CheckpointBudget& b = r.costs.budget;
    json checkpoint = to_json(b);
    json roles = std::move(checkpoint["by_role"]);  // the per-role split, once, at the scheme's top level
    checkpoint.erase("by_role");
    json admission = to_json(r.admission);
    if (!cache_is_uniform(r.costs)) {  // the cache by layer type, per GPU
        json types = json::array();
        for (const CacheLayerType& t : cache_by_layer_type(r.costs, r.admission.kv_bytes_per_token, r.admission.state_bytes_per_sequence))
        {
            types.push_back({{"type", t.type}, {"layers", t.layers}, {"bytes_per_token", t.bytes_per_token}, {"window", t.window}});
            if (t.bytes_per_sequence > 0) types.back()["bytes_per_sequence"] = t.bytes_per_sequence;
            if (t.chunk > 0) types.back()["chunk"] = t.chunk;
        }
        admission["cache_by_layer_type"] = std::move(types);
    }
    return {{"name", scheme_name(r.costs.scheme)},
            {"effective_bits", b.effective_bits},
            {"checkpoint_bytes", b.checkpoint_bytes},
            {"bytes_by_role", roles},
            {"checkpoint", checkpoint},
            {"matmul_type", matmul_type_name(r.costs.matmul)},
            {"weight_only_kernel", r.costs.weight_only_path},
            {"kv", kv_format_name(r.costs.kv)},
            {"note", r.costs.note},
            {"requested_batch", r.requested_batch},
            {"decode", to_json(r.decode)},
            {"admission", std::move(admission)},
            {"prefill", to_json(r.prefill)},
            {"throughput_tokens_per_s", r.throughput_tokens_per_s},
            {"speedup_vs_bf16", finite_or_null(r.speedup_vs_bf16)},
            {"fits_from_tp", r.fits_from_tp ? nlohmann::json(*r.fits_from_tp) : nlohmann::json(nullptr)}};
}

json bands_json(const SchemeBands& b) {
    // A figure without a band (too few corpus points in its class) is null.
    const auto band = [](const FigureBand& f, bool has) { return has ? json{{"low", f.low}, {"high", f.high}} : json(nullptr); };
    return {{"throughput_tokens_per_s", band(b.throughput_tokens_per_s, b.has_step)},
            {"step_time_s", band(b.step_time_s, b.has_step)},
            {"ttft_s", band(b.ttft_s, b.has_ttft)},
            {"kv_cache_tokens", band(b.kv_cache_tokens, b.has_kv)},
            {"basis", b.basis},
            {"covered", b.covered},
            {"coverage_note", b.coverage_note}};
}

json evidence_json(const std::vector<engine::EvidencePoint>& points) {
    json out = json::array();
    for (const engine::EvidencePoint& p : points)
        out.push_back({{"id", p.id}, {"metric", p.metric}, {"engine", p.engine}, {"engine_version", p.engine_version}, {"gpu", p.gpu},
                       {"model", p.model}, {"scheme", p.scheme}, {"batch", p.batch}, {"input_tokens", p.input_tokens},
                       {"output_tokens", p.output_tokens}, {"measured", p.measured}, {"fitted", p.fitted}, {"leave_one_out", p.loo}});
    return out;
}

// The host cost an eager step of this engine version waits for (null when none was fitted).
json eager_host_json(const engine::EagerHostCost* h) {
    if (!h) return nullptr;
    return {{"version", h->version}, {"per_layer_s", h->per_layer_s}, {"points", h->points}};
}

json engine_json(const engine::EngineSetup& e, const GpuProfile& gpu, const Workload& w) {
    json sources = json::array();
    for (const engine::SourceRef& s : e.profile.sources)
        sources.push_back({{"repository", s.repository}, {"file", s.file}, {"function", s.function}, {"version", s.version}, {"what", s.what}});
    const engine::EngineDefaults& d = e.profile.defaults;
    json out = {{"name", e.profile.engine},
            {"asked", e.choice.asked},
            {"version_asked", e.choice.version_asked},
            {"profile", e.profile.id},
            {"title", e.profile.title},
            {"versions", {{"from", e.profile.min_version.text}, {"below", e.profile.below_version ? json(e.profile.below_version->text) : json(nullptr)}}},
            {"sources", sources},
            {"prices_steps", e.price_steps},
            {"defaults",
             {{"gpu_memory_utilization", d.gpu_memory_utilization},
              {"max_num_seqs", d.max_num_seqs},
              {"max_num_batched_tokens", d.max_num_batched_tokens},
              {"chunked_prefill", d.chunked_prefill},
              {"cuda_graphs", d.cuda_graphs},
              {"block_size_tokens", d.block_size_tokens},
              {"cuda_graph_max_seq_len", d.cuda_graph_max_seq_len},
              {"cuda_graph_max_batch", engine::cuda_graph_max_batch_for(d, gpu.memory_usable_bytes, w.tensor_parallel, e.choice.version_asked,
                                                                        w.engine.max_num_batched_tokens)},
              {"hybrid_allocator_from_version", d.hybrid_allocator_from_version.empty() ? json(nullptr) : json(d.hybrid_allocator_from_version)},
              {"modelopt_kv_auto_from_version", d.modelopt_kv_auto_from_version},
              {"model_wide_sliding_window", d.model_wide_sliding_window}}}};
    if (e.price_steps) {  // what the fit gave, only where it prices the plan (a roofline plan does not depend on the corpus)
        out["fitted"] = e.profile.fitted;
        out["corpus_checksum"] = e.corpus_checksum;
        json scales = json::object();
        for (const auto& [family, v] : e.profile.step.kernel_scale_by_family) scales[family] = v;
        out["step"] = {{"fixed_step_s", e.profile.step.fixed_step_s}, {"per_layer_s", e.profile.step.per_layer_s},
                       {"eager_per_layer_s", e.profile.step.eager_per_layer_s},
                       {"eager_blend_exponent", e.profile.step.eager_blend_exponent},
                       {"eager_host", eager_host_json(e.profile.step.eager_host_for(e.choice.version_asked))},
                       {"ttft_overhead_s", e.profile.step.ttft_overhead_s}, {"kernel_scale_by_family", scales},
                       {"fitted_points", e.profile.step.fitted_points}, {"basis", e.profile.step.basis}};
    }
    // The serving terms the capacity simulator adds (the serving fit's; null with --serving-fit none).
    const engine::ServingTerms& t = e.profile.serving;
    out["serving"] = t.fitted ? json{{"host_per_sequence_s", t.host_per_sequence_s},
                                     {"host_per_prefill_sequence_s", t.host_per_prefill_sequence_s},
                                     {"frontend_latency_s", t.frontend_latency_s},
                                     {"frontend_serial_s", t.frontend_serial_s},
                                     {"runs", t.runs},
                                     {"basis", t.basis}}
                              : json(nullptr);
    return out;
}

json spec_point_json(const SpecPoint& p, const engine::SpecTerms& t) {
    const bool band = t.band_p10 != 0 || t.band_p90 != 0;
    return {{"batch", p.batch},
            {"speedup_band", band ? json::array({p.speedup / (1 + t.band_p90), p.speedup / (1 + t.band_p10)}) : json(nullptr)},
            {"plain_tpot_s", p.plain_tpot_s},
            {"tpot_s", p.tpot_s},
            {"plain_tokens_per_s", p.plain_tokens_per_s},
            {"tokens_per_s", p.tokens_per_s},
            {"speedup", p.speedup},
            {"verify_s", p.verify_s},
            {"draft_s", p.draft_s},
            {"host_s", p.host_s},
            {"disabled", p.disabled}};
}

json speculation_json(const PlanResult& p) {
    const SpecPlanRequest& s = *p.request.spec;
    json schemes = json::array();
    for (const SchemeSpeculation& sp : p.speculation) {
        json points = json::array();
        for (const SpecPoint& pt : sp.points) points.push_back(spec_point_json(pt, s.terms));
        schemes.push_back({{"scheme", sp.scheme},
                           {"draft",
                            {{"description", sp.draft.description},
                             {"weight_bytes_per_gpu", sp.draft.weight_bytes},
                             {"kv_bytes_per_token_per_gpu", sp.draft.kv_bytes_per_token},
                             {"forwards_per_step", sp.draft.extend_forwards + sp.draft.single_forwards}}},
                           {"checkpoint_bytes", sp.checkpoint_bytes},
                           {"stops_paying_batch", sp.stops_paying_batch ? json(*sp.stops_paying_batch) : json(nullptr)},
                           {"stops_paying_admitted", sp.stops_paying_admitted},
                           {"at_batch", spec_point_json(sp.at_batch, s.terms)},
                           {"points", points}});
    }
    return {{"method", std::string(engine::spec_method_name(s.request.method))},
            {"k", s.request.k},
            {"draft_model", s.request.draft_model.empty() ? json(nullptr) : json(s.request.draft_model)},
            {"acceptance",
             {{"per_position", s.acceptance.per_position}, {"mean_length", s.acceptance.mean_length()}, {"source", s.acceptance.source}}},
            {"terms",
             {{"draft_forward_s", s.terms.draft_forward_s},
              {"host_per_sequence_s", s.terms.host_per_sequence_s},
              {"ngram_per_sequence_s", s.terms.ngram_per_sequence_s},
              {"speedup_band_p10", s.terms.band_p10},
              {"speedup_band_p90", s.terms.band_p90}}},
            {"disable_above_batch", s.disable_above_batch > 0 ? json(s.disable_above_batch) : json(nullptr)},
            {"schemes", schemes}};
}

json plan_json(const PlanResult& p) {
    const PlanRequest& q = p.request;
    json schemes = json::array();
    for (const SchemeResult& r : p.schemes) {
        schemes.push_back(scheme_json(r));
        if (r.bands) schemes.back()["bands"] = bands_json(*r.bands);
        if (q.engine && q.engine->price_steps) schemes.back()["evidence"] = evidence_json(r.evidence);
    }
    json crossovers = json::array(), closed = json::array(), ridges = json::array();
    for (const Crossover& c : p.crossovers) crossovers.push_back(to_json(c));
    for (const Crossover& c : p.closed_form_crossovers) closed.push_back(to_json(c));
    for (const RidgeInfo& r : p.ridges)
        ridges.push_back({{"scheme", r.scheme}, {"batch", finite_or_null(r.batch)}, {"flop_per_byte", r.flop_per_byte},
                          {"gemm_batch", r.gemm_batch}});
    json gemm = json::array();
    for (const GemmCrossover& c : p.gemm_crossovers) gemm.push_back({{"schemes", {c.scheme_a, c.scheme_b}}, {"batch", c.batch}});
    json doc = {{"schema_version", kReportSchemaVersion},
            {"model", model_json(q.model, p.parameters)},
            {"gpu", to_json(q.gpu)},
            {"profile", to_json(q.efficiency)},
            {"workload",
             {{"batch", q.workload.batch},
              {"context", q.workload.context_tokens},
              {"kv", kv_format_name(q.workload.kv)},
              {"kv_auto", q.workload.kv_auto},
              {"tensor_parallel", q.workload.tensor_parallel},
              {"expert_parallel", q.workload.expert_parallel},
              {"kernel", kernel_quality_name(q.workload.kernel)},
              {"gpu_memory_utilization", q.workload.engine.gpu_memory_utilization},
              {"max_num_batched_tokens", q.workload.engine.max_num_batched_tokens},
              {"max_num_seqs", q.workload.engine.max_num_seqs},
              {"num_scheduler_steps", q.workload.engine.num_scheduler_steps},
              {"goal", goal_name(q.goal.goal)},
              {"accuracy", accuracy_tolerance_name(q.goal.tolerance)}}},
            {"placement",
             {{"tensor_parallel", q.workload.tensor_parallel},
              {"expert_parallel", q.workload.expert_parallel},
              {"data_parallel", q.workload.data_parallel},
              {"nodes", q.workload.nodes},
              {"gpus", q.workload.data_parallel * q.workload.tensor_parallel},
              {"gpus_per_node", gpus_per_node(q.workload)},
              {"gpu_p2p", gpu_p2p(q.workload, q.gpu)},
              {"experts_per_gpu", q.model.is_moe() ? json(q.model.num_experts / q.workload.expert_parallel) : json(nullptr)},
              {"attention", q.workload.data_parallel > 1 ? "data parallel: each engine's attention over its own tensor-parallel GPUs, its own batch"
                                                        : "tensor parallel"},
              {"experts", !q.model.is_moe() ? "none" : q.workload.expert_parallel > 1 ? "whole experts per GPU (expert parallel); the step waits for the busiest GPU"
                                                                                     : "every expert sliced over the tensor-parallel GPUs"}}},
            {"schemes", schemes},
            {"crossovers", crossovers},
            {"closed_form_crossovers", closed},
            {"ridges", ridges},
            {"gemm_crossovers", gemm},
            {"decision", to_json(p.decision)}};
    // Only when set: vLLM's --kv-cache-memory-bytes replaces the utilization's budget.
    if (q.workload.engine.kv_cache_memory_bytes > 0) doc["workload"]["kv_cache_memory_bytes"] = q.workload.engine.kv_cache_memory_bytes;
    if (q.engine) doc["engine"] = engine_json(*q.engine, q.gpu, q.workload);
    if (q.spec) doc["speculation"] = speculation_json(p);
    return doc;
}

json measured_json(const Calibration& c, const MeasuredOverlay& o, const std::string& source) {
    json fits = json::array();
    for (const KernelFit& f : c.kernel_fits) fits.push_back(kernel_fit_json(f));
    json steps = json::array();
    for (const MeasuredStepPoint& p : o.points)
        steps.push_back({{"scheme", p.scheme},
                         {"kernel", p.kernel},
                         {"batch", p.batch},
                         {"context", p.context_tokens},
                         {"admitted", p.admitted},
                         {"predicted_step_s", p.predicted_step_s},
                         {"measured_step_s", p.measured_step_s},
                         {"linear_predicted_s", p.linear_predicted_s},
                         {"linear_measured_s", p.linear_measured_s},
                         {"relative_error", p.relative_error()}});
    return {{"calibration_file", source},
            {"created_by", c.created_by},
            {"device", c.device.name},
            {"compute_capability", c.device.compute_capability},
            {"gpu_profile", c.gpu_profile},
            {"model", c.model},
            {"profile", to_json(c.profile)},
            {"median_abs_relative_error_realistic", c.median_abs_relative_error_realistic},
            {"median_abs_relative_error_measured", c.median_abs_relative_error_measured},
            {"kernel_fits", fits},
            {"steps", steps},
            {"steps_median_abs_relative_error", median_abs_relative_error(o.points)},
            {"notes", o.notes}};
}

}  // namespace quantplan
