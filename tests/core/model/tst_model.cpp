// Architectures from config.json: every bundled model, parameter counts against the published
// figures, tensor inventories, and malformed configs.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/checkpoint/model_config_json.h"
#include "core/model/model.h"
#include "core/roofline/roofline.h"
#include "tests/core/test_support.h"

using namespace quantplan;
namespace bdata = boost::unit_test::data;

BOOST_AUTO_TEST_SUITE(models)

struct ParamCase {
    const char* name;
    std::int64_t total;          // published parameter count (model card / safetensors metadata total)
    std::int64_t block_linears;  // parameters in the decoder blocks' linears
};
std::ostream& operator<<(std::ostream& os, const ParamCase& c) { return os << c.name; }

// Totals: seed 003 (Qwen3-8B), seed 000 (Llama-3-8B: 8.030e9, 6.979e9 in 224 linears); the others are
// the safetensors metadata totals of the published checkpoints.
const ParamCase kParams[] = {
    {"qwen3-8b", 8'190'735'360, 6'945'767'424},
    {"llama-3-8b", 8'030'261'248, 6'979'321'856},
    {"llama-3.1-8b", 8'030'261'248, 6'979'321'856},
    {"qwen3-32b", 32'762'123'264, 31'205'621'760},
    {"qwen3-30b-a3b", 30'532'122'624, 29'896'998'912},
    {"qwen2.5-7b-instruct", 7'615'616'512, 6'525'288'448},
    {"mistral-7b-instruct-v0.2", 7'241'732'096, 6'979'321'856},
    {"mixtral-8x7b", 46'702'792'704, 46'439'333'888},
    {"llama-3.1-70b", 70'553'706'496, 68'451'041'280},
    // The mlx_lm conversion's model.safetensors.index.json (bf16, unquantized): total_parameters.
    {"qwen2-7b-instruct", 7'615'616'512, 6'525'288'448},
    // Qwen3-4B: 4022468096 in a table of the code index pinned to revision 1cfa9a72 (id 61249037944);
    // twice it is total_size 8044936192 of sophgo/LLM-TPU's copy of model.safetensors.index.json (2b82db5).
    {"qwen3-4b", 4'022'468'096, 3'633'315'840},
    // DeepSeek-R1-Distill-Llama-8B: Hugging Face's API, "safetensors": {"total": 8030261248}, as
    // daniel-p-green/alain-ai-learning-platform saved it (522537b, sources/huggingface/model.json).
    {"deepseek-r1-distill-llama-8b", 8'030'261'248, 6'979'321'856},
    // Qwen2-72B-Instruct: "Qwen2_72B_Instruct | ... | 72706203648" in a table of the code index (id 4618468238).
    {"qwen2-72b-instruct", 72'706'203'648, 70'212'648'960},
    // Qwen2.5-72B-Instruct: "qwen/qwen2.5-72b-instruct": 72706203648 from HfApi.get_safetensors_metadata
    // (code index id 12439498600); its index's total_size 145,412,407,296 is checked below.
    {"qwen2.5-72b-instruct", 72'706'203'648, 70'212'648'960},
    // Qwen2.5-0.5B-Instruct: "qwen/qwen2.5-0.5b-instruct": 494032768 (the same id).
    {"qwen2.5-0.5b-instruct", 494'032'768, 357'826'560},
    // Qwen2.5-14B (the base model, whose shapes the Instruct model shares): 14770033664 parameters and
    // total_size 29540067328 at revision 97e1e763 (code index id 62825744798).
    {"qwen2.5-14b-instruct", 14'770'033'664, 13'212'057'600},
    // Qwen2.5-Coder-14B-Instruct: a llama.cpp server log of its GGUF, "n_params":14770033664 (code
    // index id 60241486554); the model card: 14.7B, 13.1B non-embedding.
    {"qwen2.5-coder-14b-instruct", 14'770'033'664, 13'212'057'600},
    // Llama-3.3-70B-Instruct: "parameters": 70553706496 at revision 6f6073b4 (code index id 69860280054).
    {"llama-3.3-70b-instruct", 70'553'706'496, 68'451'041'280},
    // DeepSeek-R1-Distill-Llama-70B: "Params: 70553706496" in a GGUF table (code index id 69538494549).
    {"deepseek-r1-distill-llama-70b", 70'553'706'496, 68'451'041'280},
    // DeepSeek-R1-Distill-Qwen-14B: "Parameters: 14.77B (14770033664)" (code index id 147148655).
    {"deepseek-r1-distill-qwen-14b", 14'770'033'664, 13'212'057'600},
    // Qwen2-57B-A14B (the base model, whose shapes the Instruct model shares): Hugging Face's API
    // "safetensors": {"total": 57408658944} in a test fixture (code index id 59924751875).
    {"qwen2-57b-a14b-instruct", 57'408'658'944, 56'312'725'504},
    // deepseek-coder-6.7b: "total_parameters: 6740512768" in a model roster (code index id 68884777541).
    {"deepseek-coder-6.7b-instruct", 6'740'512'768, 6'476'005'376},
    // zephyr-7b-beta has Mistral-7B-v0.1's shapes: "Total Parameters: 7241732096" for Mistral-7B
    // (code index id 32202042491); its safetensors index's total_size is twice that (checked below).
    {"zephyr-7b-beta", 7'241'732'096, 6'979'321'856},
    // OpenHermes-2.5-Mistral-7B: Mistral-7B-v0.1 with 32,002 tokens, as Open-Orca/Mistral-7B-OpenOrca:
    // "оригинальные параметры 7241748480" (code index id 38218510591).
    {"openhermes-2.5-mistral-7b", 7'241'748'480, 6'979'321'856},
};

BOOST_DATA_TEST_CASE(bundled_models_match_published_parameter_counts, bdata::make(kParams), c) {
    const ModelConfig m = test::bundled_model(c.name);
    const ParameterCounts p = count_parameters(m);
    BOOST_TEST(p.total == c.total);
    BOOST_TEST(p.block_linears == c.block_linears);
}

// Models bundled for the corpus whose checkpoints' safetensors totals were not found: their counts
// against the model cards' figures, which round to three significant digits (Qwen2.5-32B's card
// says 32.5B and 31.0B non-embedding for 32.76B and 31.21B: checked to 1%).
BOOST_AUTO_TEST_CASE(corpus_models_match_their_model_cards) {
    struct Card {
        const char* name;
        double total_billion, non_embedding_billion, tolerance;
    };
    for (const Card& c : {Card{"qwen3-14b", 14.8, 13.2, 0.005}, Card{"qwen2.5-1.5b-instruct", 1.54, 1.31, 0.005},
                          Card{"qwen2.5-3b-instruct", 3.09, 2.77, 0.005}, Card{"qwen2.5-32b-instruct", 32.5, 31.0, 0.01},
                          // QwQ-32B's card: "Number of Parameters: 32.5B. Number of Paramaters (Non-Embedding): 31.0B."
                          // (as epium.com quotes it; the card's own page was not reachable here).
                          Card{"qwq-32b", 32.5, 31.0, 0.01}}) {
        const ParameterCounts p = count_parameters(test::bundled_model(c.name));
        const double total = static_cast<double>(p.total) / 1e9;
        const double non_embedding = static_cast<double>(p.total - p.embedding - p.lm_head) / 1e9;
        BOOST_TEST(std::abs(total / c.total_billion - 1) <= c.tolerance, c.name << " total " << total);
        BOOST_TEST(std::abs(non_embedding / c.non_embedding_billion - 1) <= c.tolerance + 0.004, c.name << " non-embedding " << non_embedding);
    }
    // No published total of Qwen2-1.5B-Instruct was found; its shapes are Qwen2.5-1.5B-Instruct's
    // (hidden 1536, MLP 8960, 28 layers, 12 heads, 2 KV heads, vocabulary 151936, tied embeddings).
    BOOST_TEST(count_parameters(test::bundled_model("qwen2-1.5b-instruct")).total ==
               count_parameters(test::bundled_model("qwen2.5-1.5b-instruct")).total);
    // Qwen2.5-3B-Instruct: 6,171,877,376 bytes of bf16 in its safetensors index (quoted second-hand).
    BOOST_TEST(count_parameters(test::bundled_model("qwen2.5-3b-instruct")).total * 2 == 6'171'877'376);
    // Qwen2.5-72B-Instruct's index: total_size 145,412,407,296 ("37 safetensors shards, 145,412,407,296
    // bytes", code index ids 56276428795 and 69592811516): every tensor in bf16.
    BOOST_TEST(count_parameters(test::bundled_model("qwen2.5-72b-instruct")).total * 2 == 145'412'407'296);
    // No published total was found for these two; their shapes are those of a model that has one.
    // Qwen2-0.5B-Instruct: Qwen2.5-0.5B-Instruct's (hidden 896, MLP 4864, 24 layers, 14 heads, 2 KV
    // heads, vocabulary 151936, tied embeddings). DeepSeek-R1-Distill-Qwen-7B (a fine-tune of
    // Qwen2.5-Math-7B): Qwen2.5-7B-Instruct's (7,615,616,512).
    BOOST_TEST(count_parameters(test::bundled_model("qwen2-0.5b-instruct")).total ==
               count_parameters(test::bundled_model("qwen2.5-0.5b-instruct")).total);
    BOOST_TEST(count_parameters(test::bundled_model("deepseek-r1-distill-qwen-7b")).total ==
               count_parameters(test::bundled_model("qwen2.5-7b-instruct")).total);
    // The verified Qwen2.5-32B-Instruct file keeps Qwen's 32,768 positions (tt-metal's copy had 131,072).
    BOOST_TEST(test::bundled_model("qwen2.5-32b-instruct").max_position_embeddings == 32768);
}

// Published config.json files of architectures quantplan does not model (tests/data/configs/): each
// is read (Nemotron-H's Infinity literal included) and refused with one line naming its fields.
BOOST_AUTO_TEST_CASE(published_modern_architectures_are_refused_naming_their_fields) {
    const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
    };
    for (const auto& [name, fields] : cases) {
        const std::string path = (test::source_dir() / "tests" / "data" / "configs" / (name + ".config.json")).string();
        try {
            (void)load_model_config(path);
            BOOST_ERROR(name << " was priced");
        } catch (const Error& e) {
            const std::string what = e.what();
            BOOST_TEST(what.find('\n') == std::string::npos, what);
            for (const std::string& f : fields) BOOST_TEST(what.find(f) != std::string::npos, name << ": " << what);
        }
    }
}

// Llama 2 7B (multi-head attention: 32 KV heads) and 70B (grouped-query: 8 KV heads), vocab 32,000,
// for the corpus's old vLLM logs. The Llama 2 paper (arXiv:2307.09288, Table 1) names them 7B and 70B.
BOOST_AUTO_TEST_CASE(llama2_counts) {
    const ModelConfig small = test::bundled_model("meta-llama/Llama-2-7b-hf");
    BOOST_TEST(small.num_kv_heads == 32);
    BOOST_TEST(count_parameters(small).total == 6'738'415'616);
    const ModelConfig large = test::bundled_model("llama-2-70b");
    BOOST_TEST(large.num_kv_heads == 8);
    BOOST_TEST(count_parameters(large).total == 68'976'648'192);
    BOOST_TEST(std::abs(static_cast<double>(count_parameters(large).total) / 70e9 - 1) < 0.02);
}

// DeepSeek-R1-Distill-Qwen-32B keeps Qwen2.5-32B's architecture: the same count as the bundled
// Qwen2.5-32B-Instruct.
BOOST_AUTO_TEST_CASE(r1_distill_qwen_32b_has_the_qwen2_5_32b_architecture) {
    const ModelConfig m = test::bundled_model("deepseek-ai/DeepSeek-R1-Distill-Qwen-32B");
    BOOST_TEST(m.model_type == "qwen2");
    BOOST_TEST(m.attention_bias);
    BOOST_TEST(count_parameters(m).total == 32'763'876'352);
    BOOST_TEST(count_parameters(m).total == count_parameters(test::bundled_model("qwen2.5-32b-instruct")).total);
}

// Llama 4 Scout (every layer MoE: 16 experts of 8,192, top 1, and a shared expert of 8,192;
// chunked local attention over 8,192 tokens on three layers of four). Meta's model card: 17B active,
// 109B total with the vision encoder. The bundled config.json is Meta's file (revision 92f3b159,
// blob 804f06c2): with its vision_config the count is 108,641,793,536, Hugging Face's total for the
// repository (safetensors metadata; code index ids 68803403365 and 71422969007). The wheel's copy
// in tests/data/configs/ has no vision_config: quantplan counts the language model and says so.
BOOST_AUTO_TEST_CASE(llama4_scout_counts_chunked_layers_and_experts) {
    const ModelConfig m = test::bundled_model("meta-llama/Llama-4-Scout-17B-16E-Instruct");
    BOOST_TEST(m.model_type == "llama4_text");
    BOOST_TEST(m.num_experts == 16);
    BOOST_TEST(m.experts_per_token == 1);
    BOOST_TEST(m.moe_intermediate_size == 8192);
    BOOST_TEST(m.shared_expert_intermediate_size == 8192);
    BOOST_TEST(m.dense_layers.empty());  // interleave_moe_layer_step 1
    BOOST_TEST(m.attention_chunk_size == 8192);
    BOOST_TEST(m.chunked_layer_count() == 36);  // no_rope_layers [] in Meta's file: the default pattern
    for (std::int64_t l : {3, 7, 47}) BOOST_TEST(!m.layer_is_chunked(l), l);
    for (std::int64_t l : {0, 1, 2, 4, 46}) BOOST_TEST(m.layer_is_chunked(l), l);
    BOOST_TEST(m.not_counted.empty());
    const auto inv = tensor_inventory(m);
    const ParameterCounts p = count_parameters(m, inv);
    BOOST_TEST(p.total == 108'641'793'536);
    // The vision model and projector: 871,932,416 (a printed Llama4Config of Llama-4-Scout-17B-16E in
    // the code index, id 41112263523, tables them: class_embedding 1408, positional_embedding_vlm
    // 812416, patch_embedding 827904, adapter fc1 23068672, projector 20971520).
    BOOST_TEST(p.vision == 871'932'416);
    BOOST_TEST(p.total - p.vision == 107'769'861'120);  // the language model
    // Active as the card counts it: attention, the shared expert and one routed expert per layer,
    // routers, norms, the embedding and the head.
    const double active = static_cast<double>(p.active_block_linears + p.embedding + p.lm_head + p.norms + p.routers);
    BOOST_TEST(std::abs(active / 17e9 - 1) < 0.015, active);
    const auto has = [&](const std::string& name) { return std::any_of(inv.begin(), inv.end(), [&](const TensorInfo& t) { return t.name == name; }); };
    BOOST_TEST(has("language_model.model.layers.0.feed_forward.router.weight"));
    BOOST_TEST(has("language_model.model.layers.0.feed_forward.experts.15.gate_up_proj.weight"));
    BOOST_TEST(has("language_model.model.layers.47.feed_forward.shared_expert.down_proj.weight"));
    BOOST_TEST(has("language_model.lm_head.weight"));
    BOOST_TEST(!has("language_model.model.layers.0.self_attn.q_norm.weight"));  // an L2 norm without weights
    const auto find = [&](const std::string& name) { return std::find_if(inv.begin(), inv.end(), [&](const TensorInfo& t) { return t.name == name; }); };
    BOOST_TEST((find("vision_model.positional_embedding_vlm")->shape == std::vector<std::int64_t>{577, 1408}));
    BOOST_TEST((find("vision_model.vision_adapter.mlp.fc1.weight")->shape == std::vector<std::int64_t>{4096, 5632}));
    BOOST_TEST((find("multi_modal_projector.linear_1.weight")->shape == std::vector<std::int64_t>{5120, 4096}));
    // Its bf16 tensors: 217,283,587,072 bytes. The Hub's file list for the revision gives 50 shards of
    // 217,283,738,720 bytes (code index id 68383782598): 151,648 bytes more, the shards' safetensors
    // headers (about 3 KB each for some 1,100 tensor entries).
    const std::uint64_t bytes =
        scheme_costs(m, compress_inventory(inv), parse_scheme("bf16"), parse_kv_format("bf16"), test::bundled_gpu("h200")).budget.checkpoint_bytes;
    BOOST_TEST(bytes == 217'283'587'072u);
    BOOST_TEST(217'283'738'720u - bytes < 50u * 4096u);
    // The wheel's copy without vision_config: the same language model, the encoder named as not counted.
    const ModelConfig text_only = resolve_model((test::source_dir() / "tests/data/configs/meta-llama--Llama-4-Scout-17B-16E-Instruct.config.json").string(),
                                                test::models_dir());
    BOOST_TEST(!text_only.not_counted.empty());
    BOOST_TEST(count_parameters(text_only).total == 107'769'861'120);
    // A dense interleave and an explicit no_rope_layers list.
    const ModelConfig d = parse_model_config(R"({"model_type":"llama4_text","num_hidden_layers":4,"interleave_moe_layer_step":2,
        "no_rope_layers":[1,0,1,0],"attention_chunk_size":16})", "l4.json");
    BOOST_TEST(d.dense_layers == (std::vector<std::int64_t>{0, 2}), boost::test_tools::per_element());
    BOOST_TEST(d.chunked_layer_count() == 2);
    BOOST_TEST(d.intermediate_size == 16384);  // intermediate_size_mlp for the dense layers
    BOOST_TEST(d.not_counted.empty());         // a text-only Llama4ForCausalLM config
    BOOST_TEST(test::throws_naming([&] { parse_model_config(R"({"model_type":"llama4_text","num_hidden_layers":2,"no_rope_layers":[1,2]})", "l4.json"); },
                                   "no_rope_layers"));
}

// Qwen3-Next 80B-A3B: 36 gated DeltaNet layers and 12 full-attention layers (every fourth), each
// with a 512-expert MoE (10 per token) and a gated shared expert; full attention gates its output
// (q_proj twice as wide). The model card: "80B in total and 3B activated". Two model tables the code
// index holds (stored ids 69468411049, 70911651117; repositories not named) give 81,324,862,720 for
// Instruct and Thinking, and a third (71576727175) splits it into 79,674,391,296 for the model and
// 1,650,471,424 for the MTP module.
BOOST_AUTO_TEST_CASE(qwen3_next_counts_linear_attention_layers_and_mtp) {
    const ModelConfig m = test::bundled_model("Qwen/Qwen3-Next-80B-A3B-Thinking");
    BOOST_TEST(m.model_type == "qwen3_next");
    BOOST_TEST(m.linear_attention_layer_count() == 36);
    BOOST_TEST(m.attention_layer_count() == 12);
    for (std::int64_t l : {3, 7, 47}) BOOST_TEST(!m.layer_is_linear_attention(l), l);
    BOOST_TEST(m.layer_is_linear_attention(0));
    BOOST_TEST(m.attn_output_gate);
    BOOST_TEST(m.qwen3_next_mtp);
    const auto inv = tensor_inventory(m);
    const ParameterCounts p = count_parameters(m, inv);
    BOOST_TEST(p.total == 81'324'862'720);
    BOOST_TEST(p.speculative == 1'650'471'424);
    BOOST_TEST(p.total - p.speculative == 79'674'391'296);
    BOOST_TEST(p.active_block_linears > 3.0e9);  // "3B activated": 3.20B of block linears, 10 of 512 experts
    BOOST_TEST(p.active_block_linears < 3.3e9);
    const auto find = [&](const std::string& name) { return std::find_if(inv.begin(), inv.end(), [&](const TensorInfo& t) { return t.name == name; }); };
    const auto qkvz = find("model.layers.0.linear_attn.in_proj_qkvz.weight");
    BOOST_TEST_REQUIRE((qkvz != inv.end()));
    BOOST_TEST(qkvz->shape == (std::vector<std::int64_t>{12288, 2048}), boost::test_tools::per_element());
    const auto q = find("model.layers.3.self_attn.q_proj.weight");
    BOOST_TEST_REQUIRE((q != inv.end()));
    BOOST_TEST(q->shape == (std::vector<std::int64_t>{8192, 2048}), boost::test_tools::per_element());
    BOOST_TEST((find("model.layers.0.linear_attn.conv1d.weight")->shape == std::vector<std::int64_t>{8192, 1, 4}));
    BOOST_TEST((find("model.layers.0.mlp.shared_expert_gate.weight") != inv.end()));
    BOOST_TEST((find("mtp.layers.0.self_attn.q_proj.weight") != inv.end()));
    BOOST_TEST(find("mtp.fc.weight")->speculative);
    BOOST_TEST((find("model.layers.3.linear_attn.out_proj.weight") == inv.end()));
    // A layer_types list decides over the interval; a stack of linear attention only is refused.
    const std::string base = R"({"model_type":"qwen3_next","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"num_key_value_heads":2,"head_dim":16,"vocab_size":100,
        "intermediate_size":64,"num_experts":4,"num_experts_per_tok":2,"moe_intermediate_size":32,"linear_num_key_heads":2,"linear_num_value_heads":4,
        "linear_key_head_dim":8,"linear_value_head_dim":8,)";
    BOOST_TEST(parse_model_config(base + R"("layer_types":["full_attention","linear_attention"]})", "n.json").layer_is_linear_attention(1));
    BOOST_TEST(test::throws_naming([&] { parse_model_config(base + R"("layer_types":["linear_attention","linear_attention"]})", "n.json"); }, "no full_attention layer"));
    BOOST_TEST(test::throws_naming([&] { parse_model_config(base + R"("layer_types":["linear_attention","sliding_attention"]})", "n.json"); }, "with layer_types"));
}

// Qwen3.5: Qwen3-Next's layers with the DeltaNet's projections stored apart, a dense MLP (27B) or
// MoE, one MTP layer and a Qwen3-VL vision transformer under model.visual. The published totals
// (Hugging Face's safetensors "total", as AlexsJones/llmfit scripts/scrape_hf_models.py at 03c9bc3
// copies it: 27781427952, 35951822704, 125086497008, 403397928944) include the vision encoder and
// the MTP module; the vision and MTP splits are those HectorHHZ/Less-is-MoE
// docs/scaling/verification/model-configs.md (145919b) reads from the checkpoint headers (35B-A3B)
// and that stored notes give for 27B and 397B (ids 68960515008, 68410177373).
BOOST_AUTO_TEST_CASE(qwen3_5_counts_match_the_published_totals) {
    struct Case {
        const char* name;
        std::int64_t total, vision, mtp;
    };
    // Qwen3.6-27B: Qwen3.5-27B's shapes; its checkpoint index's tensor data, 55,562,855,904 bytes
    // (code index ids 71368715577, 71135650342), is that many bf16 parameters twice over.
    for (const Case& c : {Case{"qwen3.5-27b", 27'781'427'952, 460'730'096, 424'699'392}, Case{"qwen3.6-27b", 27'781'427'952, 460'730'096, 424'699'392},
                          Case{"qwen3.5-35b-a3b", 35'951'822'704, 446'571'248, 844'640'768},
                          Case{"qwen3.5-122b-a10b", 125'086'497'008, 451'290'864, 2'523'679'232},
                          Case{"qwen3.5-397b-a17b", 403'397'928'944, 456'010'480, 6'595'568'128}}) {
        const ModelConfig m = test::bundled_model(c.name);
        const ParameterCounts p = count_parameters(m);
        BOOST_TEST(p.total == c.total, c.name);
        BOOST_TEST(p.vision == c.vision, c.name);
        BOOST_TEST(p.speculative == c.mtp, c.name);
    }
    const ModelConfig m = test::bundled_model("Qwen/Qwen3.5-27B");
    BOOST_TEST(m.model_type == "qwen3_5_text");
    BOOST_TEST(m.linear_attention_layer_count() == 48);
    BOOST_TEST(!m.is_moe());
    BOOST_TEST(m.linear_state_value_bytes == 4);  // mamba_ssm_dtype float32
    const auto inv = tensor_inventory(m);
    const auto find = [&](const std::string& name) { return std::find_if(inv.begin(), inv.end(), [&](const TensorInfo& t) { return t.name == name; }); };
    // The checkpoint's names (vLLM 0.20.1 qwen3_5.py load_weights, qwen3_vl.py hf_to_vllm_mapper).
    for (const char* name : {"model.language_model.layers.0.linear_attn.in_proj_qkv.weight", "model.language_model.layers.0.linear_attn.in_proj_z.weight",
                             "model.language_model.layers.0.linear_attn.in_proj_b.weight", "model.language_model.layers.0.linear_attn.in_proj_a.weight",
                             "model.language_model.embed_tokens.weight", "lm_head.weight", "model.visual.patch_embed.proj.weight",
                             "model.visual.merger.linear_fc2.weight", "mtp.fc.weight", "mtp.layers.0.mlp.down_proj.weight"})
        BOOST_TEST((find(name) != inv.end()), name);
    BOOST_TEST((find("model.visual.patch_embed.proj.weight")->shape == std::vector<std::int64_t>{1152, 3, 2, 16, 16}));
    BOOST_TEST((find("model.language_model.layers.0.linear_attn.in_proj_qkv.weight")->shape == std::vector<std::int64_t>{10240, 5120}));
    // The MoE checkpoints keep A_log and the DeltaNet's norm in float32: Qwen3.5-122B-A10B's
    // index total_size is 250,173,007,840 bytes (BF16 125,086,490,096 and F32 6,912 parameters;
    // stored notes 58492289943, 71308848130).
    const ModelConfig moe = test::bundled_model("qwen3.5-122b-a10b");
    BOOST_TEST(scheme_costs(moe, compress_inventory(tensor_inventory(moe)), parse_scheme("bf16"), parse_kv_format("bf16"), test::bundled_gpu("h200"))
                   .budget.checkpoint_bytes == 250'173'007'840u);
    // A second MTP layer or an MTP embedding of its own is refused, not priced as one.
    std::ifstream in(test::models_dir() / "qwen3.5-27b" / "config.json");
    nlohmann::json j = nlohmann::json::parse(in);
    j["text_config"]["mtp_num_hidden_layers"] = 2;
    BOOST_TEST(test::throws_naming([&] { parse_model_config(j.dump(), "q.json"); }, "mtp_num_hidden_layers"));
    j["text_config"]["mtp_num_hidden_layers"] = 1;
    j["text_config"]["mamba_ssm_dtype"] = "float8";
    BOOST_TEST(test::throws_naming([&] { parse_model_config(j.dump(), "q.json"); }, "mamba_ssm_dtype"));
}

// Nemotron-H 56B (a hybrid stack: 54 Mamba2, 10 attention and 54 MLP layers, one mixer each) as
// NVIDIA's config.json gives it, Infinity literal included. The model card and the Nemotron-H
// paper (arXiv:2504.03624) call it 56B; quantplan's count from the config is 56,324,350,464.
BOOST_AUTO_TEST_CASE(nemotron_h_hybrid_stack_counts_and_names) {
    const ModelConfig m = test::bundled_model("nvidia/Nemotron-H-56B-Base-8K");
    BOOST_TEST(m.model_type == "nemotron_h");
    BOOST_TEST(m.num_layers == 118);
    BOOST_TEST(m.mamba_layer_count() == 54);
    BOOST_TEST(m.attention_layer_count() == 10);
    BOOST_TEST(m.mlp_layer_count() == 54);
    BOOST_TEST((m.layer_kind(0) == LayerKind::Mamba));
    BOOST_TEST((m.layer_kind(1) == LayerKind::Mlp));
    BOOST_TEST((m.layer_kind(7) == LayerKind::Attention));
    BOOST_TEST(m.head_dim == 128);
    BOOST_TEST(m.mamba_intermediate_size() == 16384);
    BOOST_TEST(m.mamba_conv_dim() == 16384 + 2 * 8 * 256);
    // tests/data/configs/ keeps the same file (it was refused there before Mamba layers were priced).
    ModelConfig copy = load_model_config(test::source_dir() / "tests" / "data" / "configs" / "nvidia--Nemotron-H-56B-Base-8K.config.json");
    copy.name = m.name;
    BOOST_TEST((copy == m));
    const auto inv = tensor_inventory(m);
    const ParameterCounts p = count_parameters(m, inv);
    BOOST_TEST(p.total == 56'324'350'464);
    BOOST_TEST(std::abs(static_cast<double>(p.total) / 56e9 - 1) < 0.006);
    // Linears: 54 Mamba (in_proj, out_proj), 10 attention (q, k, v, o), 54 MLP (up, down, no gate).
    BOOST_TEST(p.block_linear_count == 54 * 2 + 10 * 4 + 54 * 2);
    const auto has = [&](const std::string& name) { return std::any_of(inv.begin(), inv.end(), [&](const TensorInfo& t) { return t.name == name; }); };
    BOOST_TEST(has("backbone.embeddings.weight"));
    BOOST_TEST(has("backbone.layers.0.mixer.in_proj.weight"));
    BOOST_TEST(has("backbone.layers.0.mixer.A_log"));
    BOOST_TEST(has("backbone.layers.0.mixer.conv1d.bias"));
    BOOST_TEST(has("backbone.layers.1.mixer.up_proj.weight"));
    BOOST_TEST(!has("backbone.layers.1.mixer.gate_proj.weight"));
    BOOST_TEST(has("backbone.layers.7.mixer.o_proj.weight"));
    BOOST_TEST(has("backbone.norm_f.weight"));
    BOOST_TEST(has("lm_head.weight"));
    const auto in_proj = std::find_if(inv.begin(), inv.end(), [](const TensorInfo& t) { return t.name == "backbone.layers.0.mixer.in_proj.weight"; });
    BOOST_TEST(in_proj->shape == (std::vector<std::int64_t>{16384 + 20480 + 256, 8192}), boost::test_tools::per_element());
    BOOST_TEST((in_proj->role == TensorRole::MambaLinear));
    // Kinds quantplan does not price are refused naming them (Nemotron-3's 'E' MoE layers), and so is a stack without attention.
    const std::string base = R"({"model_type":"nemotron_h","hidden_size":64,"num_hidden_layers":3,"num_attention_heads":4,"num_key_value_heads":2,"vocab_size":100,"intermediate_size":128,"mamba_num_heads":4,"mamba_head_dim":16,"ssm_state_size":8,"n_groups":2,"conv_kernel":4,)";
    BOOST_TEST(test::throws_naming([&] { parse_model_config(base + R"("hybrid_override_pattern":"ME*"})", "n.json"); }, "layers of kind 'E' are not modelled"));
    BOOST_TEST(test::throws_naming([&] { parse_model_config(base + R"("hybrid_override_pattern":"M-M"})", "n.json"); }, "no attention layer"));
    BOOST_TEST(test::throws_naming([&] { parse_model_config(base + R"("hybrid_override_pattern":"M*"})", "n.json"); }, "lists 2 layers for num_hidden_layers 3"));
    BOOST_TEST(parse_model_config(base + R"("hybrid_override_pattern":"M*-"})", "n.json").mamba_layer_count() == 1);
}

// DeepSeek-V3 (MLA, 256 routed experts and one shared after three dense layers, one MTP module)
// against deepseek-ai/DeepSeek-V3's README_WEIGHTS.md (the copy in tenstorrent/tt-metal
// models/demos/deepseek_v3/reference/ at f3712cc): main model 671B parameters, 36.6B activated
// including 0.9B for the output head; the MTP module 11.5B unique parameters besides its copies of
// the embedding and the head (both 0.9B). README.md: "685B" on Hugging Face, 671B main + 14B MTP.
BOOST_AUTO_TEST_CASE(deepseek_v3_counts_match_its_weight_documentation) {
    const ModelConfig m = test::bundled_model("deepseek-v3");
    BOOST_TEST(m.is_mla());
    BOOST_TEST(m.head_dim == 192);
    BOOST_TEST(m.cache_values_per_token_per_layer() == 576);  // kv_lora_rank 512 + qk_rope_head_dim 64
    BOOST_TEST(m.mtp_layers == 1);
    BOOST_TEST(m.dense_layers == (std::vector<std::int64_t>{0, 1, 2}), boost::test_tools::per_element());
    BOOST_TEST(m.shared_expert_intermediate_size == 2048);
    const auto inv = tensor_inventory(m);
    const ParameterCounts p = count_parameters(m, inv);
    const double main_model = static_cast<double>(p.total - p.speculative);
    BOOST_TEST(p.total == 684'489'845'504);  // quantplan's exact count; the published figures round it
    BOOST_TEST(std::abs(main_model / 671e9 - 1) < 0.0005, main_model);
    const double active = static_cast<double>(p.active_block_linears + p.lm_head + p.norms + p.routers + p.biases);
    BOOST_TEST(std::abs(active / 36.6e9 - 1) < 0.0015, active);
    BOOST_TEST(std::abs(static_cast<double>(p.lm_head) / 0.9e9 - 1) < 0.05);
    // MTP unique: its decoder layer (attention, 256 + 1 experts, router) is 11.5B; eh_proj adds 0.1B.
    const double mtp_unique = static_cast<double>(p.speculative - p.embedding - p.lm_head);
    BOOST_TEST(std::abs(mtp_unique / 11.5e9 - 1) < 0.01, mtp_unique);
    BOOST_TEST(std::abs(static_cast<double>(p.total) / 685e9 - 1) < 0.001);
    // Names and shapes as the checkpoint stores them (modeling_deepseek.py).
    const auto find = [&](const std::string& name) {
        const auto it = std::find_if(inv.begin(), inv.end(), [&](const TensorInfo& t) { return t.name == name; });
        BOOST_TEST_REQUIRE((it != inv.end()), name);
        return *it;
    };
    BOOST_TEST(find("model.layers.0.self_attn.kv_a_proj_with_mqa.weight").shape == (std::vector<std::int64_t>{576, 7168}), boost::test_tools::per_element());
    BOOST_TEST(find("model.layers.0.self_attn.kv_b_proj.weight").shape == (std::vector<std::int64_t>{32768, 512}), boost::test_tools::per_element());
    BOOST_TEST(find("model.layers.0.self_attn.q_b_proj.weight").shape == (std::vector<std::int64_t>{24576, 1536}), boost::test_tools::per_element());
    BOOST_TEST(find("model.layers.60.self_attn.o_proj.weight").shape == (std::vector<std::int64_t>{7168, 16384}), boost::test_tools::per_element());
    BOOST_TEST(find("model.layers.2.mlp.down_proj.weight").shape == (std::vector<std::int64_t>{7168, 18432}), boost::test_tools::per_element());
    BOOST_TEST(find("model.layers.3.mlp.experts.255.gate_proj.weight").shape == (std::vector<std::int64_t>{2048, 7168}), boost::test_tools::per_element());
    BOOST_TEST(find("model.layers.3.mlp.shared_experts.down_proj.weight").shape == (std::vector<std::int64_t>{7168, 2048}), boost::test_tools::per_element());
    const TensorInfo bias = find("model.layers.3.mlp.gate.e_score_correction_bias");
    BOOST_TEST((bias.fixed_dtype == DType::Fp32));
    const TensorInfo eh = find("model.layers.61.eh_proj.weight");
    BOOST_TEST(eh.speculative);
    BOOST_TEST(eh.shape == (std::vector<std::int64_t>{7168, 14336}), boost::test_tools::per_element());
    BOOST_TEST(find("model.layers.61.mlp.experts.0.up_proj.weight").speculative);
    BOOST_TEST(find("model.layers.61.shared_head.head.weight").speculative);
    BOOST_TEST(!find("model.layers.60.mlp.experts.0.up_proj.weight").speculative);
    BOOST_TEST(std::none_of(inv.begin(), inv.end(), [](const TensorInfo& t) { return t.name.find("shared_expert_gate") != std::string::npos; }));
    // The compressed inventory keeps the MTP tensors apart and counts the same.
    const ParameterCounts pc = count_parameters(m, compress_inventory(inv));
    BOOST_TEST(pc.total == p.total);
    BOOST_TEST(pc.speculative == p.speculative);
    BOOST_TEST(pc.active_block_linears == p.active_block_linears);
}

// Kimi-K2-Instruct: DeepSeek-V3's architecture with 384 experts, 64 heads, one dense layer and no
// MTP module. MoonshotAI/Kimi-K2 README.md: "32 billion activated parameters and 1 trillion total
// parameters" (rounded figures).
BOOST_AUTO_TEST_CASE(kimi_k2_counts_match_its_model_card) {
    const ModelConfig m = test::bundled_model("kimi-k2");
    BOOST_TEST(m.name == "kimi-k2-instruct");
    BOOST_TEST(m.num_experts == 384);
    BOOST_TEST(m.mtp_layers == 0);
    const ParameterCounts p = count_parameters(m);
    BOOST_TEST(p.total == 1'026'408'232'448);
    BOOST_TEST(std::abs(static_cast<double>(p.total) / 1e12 - 1) < 0.03);
    // Activated as DeepSeek counts it (the head in, the embedding table out): 31.7B.
    const double active = static_cast<double>(p.active_block_linears + p.lm_head + p.norms + p.routers + p.biases);
    BOOST_TEST(std::abs(active / 32e9 - 1) < 0.015, active);
}

// gpt-oss (MoE in every layer with biased experts and router, q/k/v/o biases, a sink per head,
// sliding-window and full attention alternating). OpenAI's model card (arXiv:2508.10925), as the
// openai/gpt-oss README rounds it: gpt-oss-120b 117B parameters with 5.1B active, gpt-oss-20b 21B
// with 3.6B active; the card's table: 116.83B and 20.91B total, 5.13B and 3.61B active.
BOOST_AUTO_TEST_CASE(gpt_oss_counts_match_the_model_card) {
    struct Card {
        const char* name;
        double total, active;
        std::int64_t layers, sliding;
    };
    for (const Card& c : {Card{"gpt-oss-120b", 116.83e9, 5.13e9, 36, 18}, Card{"gpt-oss-20b", 20.91e9, 3.61e9, 24, 12}}) {
        const ModelConfig m = test::bundled_model(c.name);
        BOOST_TEST(m.num_layers == c.layers);
        BOOST_TEST(m.sliding_layer_count() == c.sliding);
        BOOST_TEST(m.layer_is_sliding(0));
        BOOST_TEST(!m.layer_is_sliding(1));
        BOOST_TEST(m.sliding_window == 128);
        const auto inv = tensor_inventory(m);
        const ParameterCounts p = count_parameters(m, inv);
        BOOST_TEST(std::abs(static_cast<double>(p.total) / c.total - 1) < 0.0005, c.name << " " << p.total);
        // Active as the card counts it: attention, 4 experts per layer with their biases, routers,
        // norms and the unembedding; not the embedding table.
        const double expert_biases = static_cast<double>(m.num_layers * m.num_experts * (3 * m.moe_intermediate_size));
        const double active = static_cast<double>(p.active_block_linears + p.lm_head + p.norms + p.routers + p.biases) -
                              expert_biases * (1.0 - static_cast<double>(m.experts_per_token) / static_cast<double>(m.num_experts));
        BOOST_TEST(std::abs(active / c.active - 1) < 0.005, c.name << " active " << active);
        const auto has = [&](const std::string& name) { return std::any_of(inv.begin(), inv.end(), [&](const TensorInfo& t) { return t.name == name; }); };
        BOOST_TEST(has("model.layers.0.self_attn.sinks"));
        BOOST_TEST(has("model.layers.0.self_attn.o_proj.bias"));
        BOOST_TEST(has("model.layers.0.mlp.router.bias"));
        BOOST_TEST(has("model.layers.0.mlp.experts.3.gate_up_proj.weight"));
    }
    BOOST_TEST(count_parameters(test::bundled_model("gpt-oss-120b")).total == 116'829'156'672);
    BOOST_TEST(count_parameters(test::bundled_model("gpt-oss-20b")).total == 20'914'757'184);
}

BOOST_AUTO_TEST_CASE(llama3_8b_has_224_linears_and_an_untied_head) {
    const ParameterCounts p = count_parameters(test::bundled_model("llama-3-8b"));
    BOOST_TEST(p.block_linear_count == 224);
    BOOST_TEST(p.lm_head == 128256 * 4096);
    BOOST_TEST(p.embedding == 128256 * 4096);
}

// Gemma 3 27B (Gemma3ForConditionalGeneration): most text fields from Gemma3TextConfig's defaults
// (vocab 262,208), five sliding layers (1,024-token window) in every six, four norms per layer,
// tied embeddings, and the SigLIP vision tower with its projector. ai-bot-pro/achatbot PR #150
// prints "google/gemma-3-27b-it 27432.40664 M parameters" from the loaded model.
BOOST_AUTO_TEST_CASE(gemma3_27b_counts_and_layer_pattern) {
    const ModelConfig m = test::bundled_model("google/gemma-3-27b-it");
    BOOST_TEST(m.name == "gemma-3-27b-it");
    BOOST_TEST(m.model_type == "gemma3_text");
    BOOST_TEST(m.vocab_size == 262208);
    BOOST_TEST(m.head_dim == 128);
    BOOST_TEST(m.tie_word_embeddings);
    BOOST_TEST(m.num_layers == 62);
    BOOST_TEST(m.sliding_window == 1024);
    BOOST_TEST(m.sliding_layer_count() == 52);
    for (std::int64_t l : {5, 11, 59}) BOOST_TEST(!m.layer_is_sliding(l), l);
    for (std::int64_t l : {0, 4, 6, 60, 61}) BOOST_TEST(m.layer_is_sliding(l), l);
    const auto inv = tensor_inventory(m);
    const ParameterCounts p = count_parameters(m, inv);
    BOOST_TEST(p.total == 27'432'406'640);
    BOOST_TEST(std::llround(static_cast<double>(p.total) / 10.0) == 2'743'240'664);  // the printed 27432.40664 M
    // The tower: 27 SigLIP blocks of 1,152, 4,096 patch positions; the projector [1152, 5376] and its norm.
    BOOST_TEST(p.vision == 416'866'032 + 1152 * 5376 + 1152);
    BOOST_TEST(p.block_linears == std::int64_t{62} * (2 * 4096 * 5376 + 2 * 2048 * 5376 + std::int64_t{3} * 21504 * 5376));
    BOOST_TEST(p.lm_head == 0);
    const auto has = [&](const std::string& name) { return std::any_of(inv.begin(), inv.end(), [&](const TensorInfo& t) { return t.name == name; }); };
    BOOST_TEST(has("language_model.model.embed_tokens.weight"));
    BOOST_TEST(has("language_model.model.layers.61.pre_feedforward_layernorm.weight"));
    BOOST_TEST(has("language_model.model.layers.0.post_feedforward_layernorm.weight"));
    BOOST_TEST(has("language_model.model.layers.0.self_attn.k_norm.weight"));
    BOOST_TEST(has("vision_tower.vision_model.encoder.layers.26.mlp.fc2.bias"));
    BOOST_TEST(has("multi_modal_projector.mm_input_projection_weight"));
    BOOST_TEST(!has("language_model.lm_head.weight"));
    BOOST_TEST(!has("model.embed_tokens.weight"));
    // A text-only Gemma3ForCausalLM config (model_type gemma3_text at the top) keeps "model." and has no tower.
    const ModelConfig text = parse_model_config(R"({"model_type":"gemma3_text","num_hidden_layers":12,"sliding_window":512})", "g.json");
    BOOST_TEST(text.vocab_size == 262208);
    BOOST_TEST(text.hidden_size == 2304);
    BOOST_TEST(!text.has_vision());
    BOOST_TEST(text.sliding_layer_count() == 10);
    BOOST_TEST(tensor_inventory(text).front().name == "model.embed_tokens.weight");
    // layer_types, as transformers 4.53 on write it, decides over the pattern.
    const ModelConfig typed = parse_model_config(
        R"({"model_type":"gemma3_text","num_hidden_layers":2,"layer_types":["full_attention","sliding_attention"]})", "g.json");
    BOOST_TEST(!typed.layer_is_sliding(0));
    BOOST_TEST(typed.layer_is_sliding(1));
    BOOST_TEST(typed.sliding_window == 4096);
}

// Gemma 3 12B (Google's file at revision 96b6f1ec, blob 0fbe1ff5): 48 layers of 3,840, 16 heads and
// 8 KV heads of 256 (head_dim and query_pre_attn_scalar left to their default, 256), the same
// SigLIP tower. Hugging Face's total: "api/models/google/gemma-3-12b-it": { safetensors: { total:
// 12187325040 } } in a test fixture of the code index (id 59172823075).
BOOST_AUTO_TEST_CASE(gemma3_12b_counts_and_layer_pattern) {
    const ModelConfig m = test::bundled_model("google/gemma-3-12b-it");
    BOOST_TEST(m.name == "gemma-3-12b-it");
    BOOST_TEST(m.model_type == "gemma3_text");
    BOOST_TEST(m.num_layers == 48);
    BOOST_TEST(m.hidden_size == 3840);
    BOOST_TEST(m.num_attention_heads == 16);
    BOOST_TEST(m.num_kv_heads == 8);
    BOOST_TEST(m.head_dim == 256);
    BOOST_TEST(m.tie_word_embeddings);
    BOOST_TEST(m.sliding_window == 1024);
    BOOST_TEST(m.sliding_layer_count() == 40);  // layers 5, 11, ..., 47 attend to the whole context
    for (std::int64_t l : {5, 11, 47}) BOOST_TEST(!m.layer_is_sliding(l), l);
    for (std::int64_t l : {0, 4, 6, 46}) BOOST_TEST(m.layer_is_sliding(l), l);
    const ParameterCounts p = count_parameters(m);
    BOOST_TEST(p.total == 12'187'325'040);
    BOOST_TEST(p.vision == 416'866'032 + 1152 * 3840 + 1152);  // the 27B's tower, a projector [1152, 3840]
}

BOOST_AUTO_TEST_CASE(qwen3_8b_inventory_names_shapes_roles) {
    const ModelConfig m = test::bundled_model("qwen3-8b");
    BOOST_TEST(m.head_dim == 128);
    BOOST_TEST(m.qk_norm);
    const auto inv = tensor_inventory(m);
    const auto find = [&](const std::string& name) {
        return std::find_if(inv.begin(), inv.end(), [&](const TensorInfo& t) { return t.name == name; });
    };
    const auto q = find("model.layers.0.self_attn.q_proj.weight");
    BOOST_TEST_REQUIRE((q != inv.end()));
    BOOST_TEST(q->shape == (std::vector<std::int64_t>{4096, 4096}), boost::test_tools::per_element());
    BOOST_TEST(static_cast<int>(q->role) == static_cast<int>(TensorRole::AttentionLinear));
    const auto k = find("model.layers.35.self_attn.k_proj.weight");
    BOOST_TEST_REQUIRE((k != inv.end()));
    BOOST_TEST(k->shape == (std::vector<std::int64_t>{1024, 4096}), boost::test_tools::per_element());
    BOOST_TEST((find("model.layers.3.self_attn.q_norm.weight") != inv.end()));
    BOOST_TEST((find("lm_head.weight") != inv.end()));
    BOOST_TEST((find("model.layers.36.mlp.up_proj.weight") == inv.end()));
}

BOOST_AUTO_TEST_CASE(qwen2_has_qkv_biases_and_moe_models_have_experts_and_routers) {
    const auto qwen2 = tensor_inventory(test::bundled_model("qwen2.5-7b-instruct"));
    BOOST_TEST(std::count_if(qwen2.begin(), qwen2.end(), [](const TensorInfo& t) { return t.role == TensorRole::Bias; }) == 28 * 3);
    const ModelConfig moe = test::bundled_model("qwen3-30b-a3b");
    BOOST_TEST(moe.num_experts == 128);
    BOOST_TEST(moe.experts_per_token == 8);
    BOOST_TEST(moe.moe_intermediate_size == 768);
    const ParameterCounts p = count_parameters(moe);
    BOOST_TEST(p.routers == 48 * 128 * 2048);
    // Active parameters: attention plus 8 of 128 experts per layer (the "A3B").
    BOOST_TEST(p.active_block_linears == p.block_linears - p.experts + p.experts / 16);
    const auto mixtral = tensor_inventory(test::bundled_model("mixtral-8x7b"));
    BOOST_TEST(std::any_of(mixtral.begin(), mixtral.end(), [](const TensorInfo& t) { return t.name == "model.layers.31.block_sparse_moe.experts.7.w2.weight"; }));
}

BOOST_AUTO_TEST_CASE(tied_embeddings_have_no_lm_head_tensor) {
    const ModelConfig m = parse_model_config(R"({"model_type":"qwen2","hidden_size":64,"intermediate_size":128,"num_hidden_layers":2,
        "num_attention_heads":4,"num_key_value_heads":2,"vocab_size":1000,"tie_word_embeddings":true})", "tied.json");
    const auto inv = tensor_inventory(m);
    BOOST_TEST(std::none_of(inv.begin(), inv.end(), [](const TensorInfo& t) { return t.role == TensorRole::LmHead; }));
    BOOST_TEST(m.head_dim == 16);
    BOOST_TEST(count_parameters(m).lm_head == 0);
}

// Architectures quantplan does not model are refused in one line naming the fields, never priced as
// a simpler one (DeepSeek-V3 used to come out as a 38.6B-parameter model).
BOOST_AUTO_TEST_CASE(unmodelled_architectures_are_refused_naming_the_fields) {
    const std::string base = R"("hidden_size":64,"intermediate_size":128,"num_hidden_layers":2,"num_attention_heads":4,"num_key_value_heads":2,"vocab_size":1000)";
    const struct {
        std::string extra;
        const char* fragment;
    } cases[] = {
        {R"("model_type":"deepseek_v2","kv_lora_rank":512,"q_lora_rank":1536,"n_routed_experts":256)", "model_type 'deepseek_v2' with kv_lora_rank, q_lora_rank, n_routed_experts"},
        {R"("model_type":"deepseek_v32","kv_lora_rank":512,"index_topk":2048)", "model_type 'deepseek_v32' with kv_lora_rank"},
        {R"("model_type":"deepseek_v3","qk_nope_head_dim":128,"qk_rope_head_dim":64,"v_head_dim":128)", "kv_lora_rank: missing"},
        {R"("model_type":"gpt_oss","layer_types":["sliding_attention","chunked_attention"],"num_local_experts":4,"num_experts_per_tok":2)", "model_type 'gpt_oss' with layer_types"},
        {R"("model_type":"gpt_oss","layer_types":["sliding_attention","full_attention"],"num_local_experts":4,"num_experts_per_tok":2)", "sliding_window: missing"},
        {R"("model_type":"gpt_oss","layer_types":["full_attention"],"num_local_experts":4,"num_experts_per_tok":2)", "lists 1 layers for num_hidden_layers 2"},
        {R"("model_type":"gemma2")", "model_type 'gemma2' is not modelled"},
        {R"("model_type":"gemma3_text","layer_types":["sliding_attention","chunked_attention"])", "model_type 'gemma3_text' with layer_types"},
        {R"("model_type":"gemma3_text","sliding_window_pattern":0)", "sliding_window_pattern: must be at least 1"},
        {R"("model_type":"qwen2","kv_lora_rank":512)", "model_type 'qwen2' with kv_lora_rank"},
        {R"("model_type":"qwen2","sliding_window":4096,"use_sliding_window":true)", "with sliding_window"},
    };
    for (const auto& c : cases) {
        const std::string text = "{" + base + "," + c.extra + "}";
        BOOST_TEST(test::throws_naming([&] { parse_model_config(text, "config.json"); }, c.fragment), c.extra);
    }
    // Newer transformers write layer_types for plain models: all full attention is priced.
    BOOST_TEST(parse_model_config("{" + base + R"(,"model_type":"qwen3","layer_types":["full_attention","full_attention"]})", "lt.json").num_layers == 2);
    // Mistral's model-wide window (sliding_window, no layer_types) is priced on every layer, unless
    // use_sliding_window is false or the window is null.
    const ModelConfig mistral = parse_model_config("{" + base + R"(,"model_type":"mistral","sliding_window":4096})", "m.json");
    BOOST_TEST(mistral.sliding_layer_count() == 2);
    BOOST_TEST(mistral.sliding_window == 4096);
    BOOST_TEST(mistral.sliding_window_model_wide);
    BOOST_TEST(parse_model_config("{" + base + R"(,"model_type":"mistral","sliding_window":4096,"use_sliding_window":false})", "m.json").sliding_layer_count() == 0);
    BOOST_TEST(parse_model_config("{" + base + R"(,"model_type":"mixtral","sliding_window":null,"num_local_experts":4,"num_experts_per_tok":2})", "m.json").sliding_layer_count() == 0);
    BOOST_TEST(test::throws_naming([&] { parse_model_config("{" + base + R"(,"model_type":"mistral","sliding_window":"4k"})", "m.json"); }, "sliding_window"));
    BOOST_TEST(test::throws_naming([&] { parse_model_config("{" + base + R"(,"model_type":"mistral","sliding_window":-1})", "m.json"); }, "sliding_window"));
    BOOST_TEST(parse_model_config("{" + base + R"(,"model_type":"mistral","sliding_window":0})", "m.json").sliding_layer_count() == 0);
    // Beside layer_types, vLLM versions disagree on which layers slide: refused, naming layer_types.
    BOOST_TEST(test::throws_naming(
        [&] { parse_model_config("{" + base + R"(,"model_type":"mistral","sliding_window":4096,"layer_types":["full_attention","full_attention"]})", "m.json"); },
        "layer_types"));
    // Qwen's configs carry a sliding_window they do not use: priced.
    BOOST_TEST(parse_model_config("{" + base + R"(,"model_type":"qwen2","sliding_window":131072,"use_sliding_window":false})", "q.json").num_layers == 2);
    // config.json as Python writes it (NaN, Infinity) is read: the literals are not architecture fields.
    BOOST_TEST(parse_model_config("{" + base + R"(,"model_type":"llama","rope_scaling":null,"time_step_limit":[0.0, Infinity],"x":NaN})", "py.json").hidden_size == 64);
}

// zephyr-7b-beta (Mistral-7B-v0.1's architecture): a 4,096-token window on all 32 layers, and its
// checkpoint's bf16 bytes are the total_size of its model.safetensors.index.json (14,483,464,192, in
// the same copy of the Hub repository as its config.json: models/README.md).
BOOST_AUTO_TEST_CASE(zephyr_has_mistral_v0_1s_window_on_every_layer) {
    const ModelConfig m = test::bundled_model("HuggingFaceH4/zephyr-7b-beta");
    BOOST_TEST(m.sliding_layer_count() == 32);
    BOOST_TEST(m.sliding_window == 4096);
    BOOST_TEST(m.sliding_window_model_wide);
    BOOST_TEST(checkpoint_budget(tensor_inventory(m), parse_scheme("bf16")).checkpoint_bytes == 14'483'464'192ull);
}

// Configs bundled only as evidence for the corpus (phi-2, opt-125m, Llama-3.2-11B-Vision:
// catalog.json "priced": false)
// are refused in one line that names their model type and says why they are bundled; a config
// marked so that became priced would fail here, so the mark stays true.
BOOST_AUTO_TEST_CASE(every_unpriced_bundled_config_is_refused_in_one_line) {
    std::size_t unpriced = 0;
    for (const BundledModel& b : load_model_catalog(test::models_dir())) {
        if (b.priced) continue;
        ++unpriced;
        try {
            test::bundled_model(b.name);
            BOOST_ERROR(b.name << " is marked \"priced\": false but loads");
        } catch (const Error& e) {
            const std::string what = e.what();
            BOOST_TEST(what.find("bundled only as evidence for the measurement corpus") != std::string::npos, what);
            BOOST_TEST(what.find("model_type '") != std::string::npos, what);
            BOOST_TEST(what.find('\n') == std::string::npos, what);
        }
    }
    BOOST_TEST(unpriced == 3u);
}

BOOST_AUTO_TEST_CASE(names_resolve_like_the_command_line) {
    BOOST_TEST(test::bundled_model("Qwen/Qwen3-8B").name == "qwen3-8b");
    BOOST_TEST(test::bundled_model("QWEN3-8B").name == "qwen3-8b");
    BOOST_TEST(test::bundled_model("meta-llama/Meta-Llama-3-8B").name == "llama-3-8b");
    BOOST_TEST(test::bundled_model("mistralai/Mistral-7B-Instruct-v0.2").name == "mistral-7b-instruct-v0.2");
    BOOST_TEST(test::bundled_model((test::models_dir() / "qwen3-32b").string()).hidden_size == 5120);
    try {
        test::bundled_model("gpt-5");
        BOOST_FAIL("unknown model accepted");
    } catch (const Error& e) {
        BOOST_TEST(std::string(e.what()).find("qwen3-8b") != std::string::npos);  // lists the bundled names
    }
}

struct BadConfig {
    const char* json;
    const char* field;
};
std::ostream& operator<<(std::ostream& os, const BadConfig& b) { return os << b.field; }

const BadConfig kBad[] = {
    {R"({"num_hidden_layers":2,"num_attention_heads":4,"vocab_size":10,"intermediate_size":8})", "hidden_size"},
    {R"({"hidden_size":-64,"num_hidden_layers":2,"num_attention_heads":4,"vocab_size":10,"intermediate_size":8})", "hidden_size"},
    {R"({"hidden_size":"64","num_hidden_layers":2,"num_attention_heads":4,"vocab_size":10,"intermediate_size":8})", "hidden_size"},
    {R"({"hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"num_key_value_heads":3,"vocab_size":10,"intermediate_size":8})", "num_key_value_heads"},
    {R"({"hidden_size":64,"num_hidden_layers":99999999999,"num_attention_heads":4,"vocab_size":10,"intermediate_size":8})", "num_hidden_layers"},
    {R"({"hidden_size":1e300,"num_hidden_layers":2,"num_attention_heads":4,"vocab_size":10,"intermediate_size":8})", "hidden_size"},
    {R"({"hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"vocab_size":10})", "intermediate_size"},
    {R"({"hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"vocab_size":10,"num_experts":8,"moe_intermediate_size":8})", "num_experts_per_tok"},
    {R"({"hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"vocab_size":10,"intermediate_size":8,"tie_word_embeddings":"yes"})", "tie_word_embeddings"},
    {R"({"hidden_size":64,)", "config.json"},
    {R"([1,2,3])", "config.json"},
    {R"({"hidden_size":1e400,"num_hidden_layers":2,"num_attention_heads":4,"vocab_size":10,"intermediate_size":8})", "config.json"},
    {R"({"hidden_size":64,"num_hidden_layers":2,"num_attention_heads":0,"vocab_size":10,"intermediate_size":8})", "num_attention_heads"},
};

BOOST_DATA_TEST_CASE(malformed_configs_name_the_field, bdata::make(kBad), b) {
    try {
        parse_model_config(b.json, "config.json");
        BOOST_FAIL("accepted a bad config");
    } catch (const Error& e) {
        BOOST_TEST(std::string(e.what()).find(b.field) != std::string::npos, "'" << e.what() << "' does not name " << b.field);
    }
}

BOOST_AUTO_TEST_CASE(missing_files_are_errors) {
    BOOST_CHECK_THROW(load_model_config("/nonexistent/config.json"), Error);
    BOOST_CHECK_THROW(resolve_model("/nonexistent/dir/", test::models_dir()), Error);
}

BOOST_AUTO_TEST_SUITE_END()
