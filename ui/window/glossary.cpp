#include "ui/window/glossary.h"

#include <cstring>
#include <iterator>

namespace quantplan::ui {
namespace {

struct Entry {
    const char* key;
    const char* text;
};

// Definitions follow the seeds' wording (seed 003 for the lecture terms, seed 000 for the roofline).
constexpr Entry kEntries[] = {
    {"model", "The transformer priced: a bundled model, or any Hugging Face config.json or checkpoint folder you open."},
    {"gpu", "The GPU profile: memory, bandwidth and tensor-core peaks per number format, each figure with its source."},
    {"schemes", "Quantization schemes to compare. Grammar: w<bits>a<bits>[-format][-granularity][-sym|-asym][-static], "
                "e.g. w4a16-g128 (4-bit weights, 16-bit activations, one scale per 128 weights)."},
    {"batch", "Sequences decoded together: every decode step generates one token for each of them. Capped by what the "
              "KV cache admits."},
    {"context", "Tokens already in each sequence's KV cache at this step (prompt plus generated tokens)."},
    {"kv", "Number format of the KV cache (the keys and values kept for every past token), set separately from the "
           "weights, as engines do with --kv-cache-dtype. auto is the engines' default: 16-bit, except that the "
           "checkpoint as it ships (native) keeps the FP8 KV cache a ModelOpt export declares on the engine "
           "versions that follow it (vLLM 0.14 on, SGLang 0.5.3 on)."},
    {"kernel", "Weight-only kernel quality: fused dequantizes in registers (Marlin class); generic dequantizes to 16-bit "
               "first and runs an ordinary GEMM. Matters only when compute-bound."},
    {"profile", "Efficiency applied to the datasheet peaks: ideal (100%), realistic (80% of bandwidth, 55% of tensor-core "
                "peak, as in seed 003), measured (fitted by quantplan --validate on a real GPU; needs a calibration file), or "
                "engine: the engine profile's step model fitted to published measurements, with p10-p90 error bands "
                "(docs/fidelity.md)."},
    {"engine", "The serving engine and version whose memory rules, defaults and fitted step model price the plan under the "
               "engine profile: vLLM V0 (0.4-0.7), V1 (0.8-0.19), V1 from 0.20 (CUDA-graph memory counted), SGLang 0.3-0.4.7, "
               "0.4.8-0.5.2, 0.5.3 on."},
    {"calibration", "A calibration file written by quantplan --validate on a real GPU: its measured decode steps are drawn as "
                    "triangles over the crossover chart, and it supplies the measured efficiency profile."},
    {"gpu_mem_util", "gpu_memory_utilization: the fraction of the GPU's usable memory the engine may take; the KV cache gets "
                     "what is left after weights and workspaces."},
    {"tp", "Tensor-parallel degree: the model's heads and MLP columns are split over this many GPUs, which then exchange "
           "activations twice per layer."},
    {"ep", "Expert parallel (MoE models, --ep): each tensor-parallel GPU holds whole experts instead of a slice of every one, "
           "and each layer waits for the GPU whose experts the batch loads most. Slower at small batch, the same bytes once "
           "every expert is busy."},
    {"dp", "Data-parallel engines (MoE models with expert parallel, --dp): this many engines, each with its own batch and "
           "its attention over its own tensor-parallel GPUs, share the experts over all their GPUs; every MoE layer sends "
           "tokens to their experts' GPUs and back (all-to-all)."},
    {"nodes", "Nodes the GPUs (data-parallel engines x tensor parallel) span, at most 8 per node: traffic between nodes "
              "runs at the GPU profile's network figure (400 Gb/s per GPU on DGX H100, H200 and B200)."},
    {"gpu_p2p", "Peer-to-peer between the tensor-parallel GPUs of a node (--gpu-p2p). auto takes the GPU profile's: none on "
                "GeForce cards (RTX 3090, 4090, 5090), where every all-reduce of a step goes through host memory, about 12 us a "
                "call and a quarter of the PCIe link's bandwidth (nccl-tests without P2P). off where the platform hides it "
                "(GPUs in separate containers); on for a pair of RTX 3090s on an NVLink bridge."},
    {"goal", "What the recommendation optimises: tokens per second at the admitted batch (throughput) or the time of one "
             "decode step (latency)."},
    {"accuracy", "How much published accuracy loss you accept; schemes beyond it are vetoed after the ranking."},
    {"reasoning", "Long chains of thought lose accuracy first under quantization: tightens the veto."},
    {"mxfp4_mxfp8", "MXFP4 experts (gpt-oss) with MXFP8 activations: on GPUs with block-scaled FP4/FP8 tensor cores (B200, RTX 5090) their matmuls at the FP8 rate, as vLLM runs them on sm_100 with VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8=1. Off: W4A16, vLLM's default. The fitted engine profiles price the default."},
    {"spec", "Speculative decoding: a draft (an EAGLE-3 or EAGLE head, the model's MTP layers, n-gram lookup) proposes K tokens and one verify step scores them all. It pays while the GPU is memory-bound and stops paying once the verify step's extra FLOPs cost more than the accepted tokens save: the crossover chart draws each scheme's time per token speculating and marks the batch where it stops paying."},
    {"spec_acceptance", "Per-position acceptance rates (0.8,0.6,0.45 as vLLM logs them) or a mean acceptance length (tokens per step, the bonus token included). Empty: the published figure for the model family and method (assets/measurements/speculative/)."},
    {"enforce_eager", "The engine runs without CUDA graphs (vLLM --enforce-eager, SGLang --disable-cuda-graph): under the engine profile each decode step pays the fitted launch cost per layer."},
    {"effective_bits", "Bits per weight including scales and zero points: bytes of the quantized linears x 8 / their weights. "
                       "INT4 g128 with a 16-bit scale and a 4-bit zero point is 4 + 16/128 + 4/128 = 4.156."},
    {"checkpoint", "Bytes of every tensor of the checkpoint under the scheme (safetensors headers not included)."},
    {"payload", "The quantized values themselves, packed: bits x weights of the covered linear layers."},
    {"metadata", "Scales, zero points and auxiliary tensors (g_idx, static activation scales) that travel with the payload."},
    {"unquantized", "Tensors the scheme leaves in 16-bit: embeddings, an untied lm_head, norms, biases, routers."},
    {"naive", "The '4-bit is a quarter' expectation: the bf16 checkpoint x payload bits / 16, ignoring metadata and "
              "unquantized leftovers."},
    {"compression", "bf16 checkpoint bytes / this scheme's checkpoint bytes."},
    {"step_time", "Time of one decode step: max(bytes / bandwidth, FLOP / tensor-core rate) plus tensor-parallel "
                  "communication."},
    {"tokens_per_s", "Decode throughput: the admitted batch / the step time."},
    {"speedup", "This scheme's tokens per second / bf16's at the same workload."},
    {"bound", "Which resource sets the step time: memory (bytes / bandwidth is longer) or compute (FLOP / peak rate is "
              "longer)."},
    {"admitted_batch", "The batch the engine actually runs: the requested batch, or fewer when the KV cache admits fewer "
                       "whole sequences of this context."},
    {"max_sequences", "Whole sequences of this context that fit in the KV-cache budget."},
    {"kv_budget", "What the engine leaves for the KV cache: utilization x usable memory - weights - activation and sampler "
                  "workspaces - runtime overhead."},
    {"kv_bytes_per_token", "KV-cache bytes one token takes across all layers per GPU (keys, values and per-token scales)."},
    {"ridge", "The batch at which a scheme's decode step turns from memory-bound to compute-bound."},
    {"crossover", "A batch at which two schemes swap order: one is faster below it, the other above."},
    {"ttft", "Time to first token: the prefill of one prompt of the context length, in chunks of max_num_batched_tokens."},
    {"regime", "Which resource the workload is limited by: weight bytes, KV-cache bytes, or tensor-core compute. The first "
               "branch of the decision."},
    {"veto", "A scheme whose published accuracy loss exceeds your tolerance is removed from the ranking, whatever its speed."},
    {"layer_error", "Relative error of the layer's output (X W^T) against the unquantized layer, on calibration tokens."},
    {"weight_error", "Relative error of the quantized weights against the originals, not weighted by the activations."},
    {"granularity", "How many weights share one scale: per tensor, per output channel, or groups of 128, 64, 32 along the "
                    "input dimension."},
    {"usable_levels", "How many of the format's levels the median ordinary group actually uses once the largest value "
                      "sets the scale."},
    {"outlier", "Magnitude of the few outlier activation channels relative to a typical channel (seed 003 walks 20x and "
                "100x)."},
    {"gptq", "GPTQ: keeps the scales, improves the rounding column by column using the inverse Hessian of the calibration "
             "activations."},
    {"awq", "AWQ: scales salient input channels (by mean activation magnitude) up in the weights before quantizing."},
    {"smoothquant", "SmoothQuant: divides activations by s_j = sqrt(max|x_j| / max|w_j|) and multiplies the weights by it, "
                    "moving the difficulty into the weights."},
    {"activation_format", "Format of the activations entering the matmul: 16-bit (unquantized), INT8 or FP8, one scale per "
                          "token."},
};

}  // namespace

QString glossary(const char* term) {
    for (const Entry& e : kEntries)
        if (std::strcmp(e.key, term) == 0) return QString::fromUtf8(e.text);
    return {};
}

const char* const* glossary_keys(int* count) {
    static const char* keys[std::size(kEntries)];
    for (std::size_t i = 0; i < std::size(kEntries); ++i) keys[i] = kEntries[i].key;
    *count = static_cast<int>(std::size(kEntries));
    return keys;
}

}  // namespace quantplan::ui
