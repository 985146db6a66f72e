// Writes the fuzz target's seed corpus into the folder given: valid files for each
// mode (the first byte picks the mode, see fuzz_checkpoint.cpp). A fuzzer mutates
// valid inputs far more usefully than random bytes.
#include <cstdio>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "checkpoint/hf_llama.hpp"
#include "fuzz_config.hpp"
#include "tokenizer/synthetic_tokenizer.hpp"

using namespace anatomy;

namespace {

void write(const std::string& path, char mode, const std::string& body) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << mode << body;
}

std::string text(const std::vector<std::uint8_t>& bytes) { return std::string(bytes.begin(), bytes.end()); }

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: make_seeds DIR\n");
        return 2;
    }
    const std::string dir = argv[1];
    const Model<float> micro = random_model(fuzz_micro_config(), 1);
    ModelConfig untied = fuzz_micro_config();
    untied.tie_embeddings = false;
    write(dir + "/safetensors-f32", 0, text(hf_safetensors(micro, DType::f32)));
    write(dir + "/safetensors-bf16", 0, text(hf_safetensors(micro, DType::bf16)));
    write(dir + "/safetensors-f16-untied", 0, text(hf_safetensors(random_model(untied, 2), DType::f16)));
    write(dir + "/config", 1, hf_config_json(fuzz_micro_config(), DType::bf16).dump(2));
    write(dir + "/config-tinyllama", 1, hf_config_json(tinyllama_config(), DType::bf16).dump(2));
    write(dir + "/tokenizer-16", 2, synthetic_tokenizer_json(16).dump());
    write(dir + "/tokenizer-400", 2, synthetic_tokenizer_json(400).dump());
    write(dir + "/model-f32", 3, text(hf_safetensors(micro, DType::f32)));
    write(dir + "/model-bf16", 3, text(hf_safetensors(micro, DType::bf16)));
    return 0;
}
