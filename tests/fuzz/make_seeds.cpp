// Writes the fuzz target's seed corpus into the folder given: valid files for each
// mode (the first byte picks the mode, see fuzz_checkpoint.cpp). A fuzzer mutates
// valid inputs far more usefully than random bytes.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "checkpoint/hf_llama.hpp"
#include "checkpoint/llama2c.hpp"
#include "fuzz_config.hpp"
#include "tokenizer/synthetic_tokenizer.hpp"

using namespace anatomy;

namespace {

void write(const std::string& path, char mode, const std::string& body) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << mode << body;
}

std::string text(const std::vector<std::uint8_t>& bytes) { return std::string(bytes.begin(), bytes.end()); }

std::string little_endian(std::uint64_t value, int bytes) {
    std::string out;
    for (int i = 0; i < bytes; ++i) out += char(value >> (8 * i));
    return out;
}

// An .npz as np.savez writes it, in miniature: one stored member "logits.npy", a
// float64 array of shape (1, 2, 3), its local header, the central directory and the
// end record (CRCs left 0: the reader does not check them).
std::string tiny_npz() {
    std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 2, 3), }";
    header += std::string((64 - (10 + header.size() + 1) % 64) % 64, ' ') + "\n";  // the preamble a multiple of 64 bytes
    std::string npy = std::string("\x93NUMPY\x01\x00", 8) + little_endian(header.size(), 2) + header;
    for (int i = 0; i < 6; ++i) {
        const double value = 0.5 * i - 1;
        std::uint64_t bits;
        std::memcpy(&bits, &value, 8);
        npy += little_endian(bits, 8);
    }
    const std::string name = "logits.npy";
    const std::string sizes = little_endian(0, 4) + little_endian(npy.size(), 4) + little_endian(npy.size(), 4);  // crc, sizes
    const std::string local = little_endian(0x04034b50, 4) + little_endian(20, 2) + little_endian(0, 2) + little_endian(0, 2) +
                              little_endian(0, 4) + sizes + little_endian(name.size(), 2) + little_endian(0, 2) + name;
    const std::string central = little_endian(0x02014b50, 4) + little_endian(20, 2) + little_endian(20, 2) + little_endian(0, 2) +
                                little_endian(0, 2) + little_endian(0, 4) + sizes + little_endian(name.size(), 2) + little_endian(0, 2) +
                                little_endian(0, 2) + little_endian(0, 2) + little_endian(0, 2) + little_endian(0, 4) +
                                little_endian(0, 4) + name;
    const std::size_t directory_at = local.size() + npy.size();
    const std::string end = little_endian(0x06054b50, 4) + little_endian(0, 2) + little_endian(0, 2) + little_endian(1, 2) +
                            little_endian(1, 2) + little_endian(central.size(), 4) + little_endian(directory_at, 4) + little_endian(0, 2);
    return local + npy + central + end;
}

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
    write(dir + "/learner-npz", 4, tiny_npz());
    write(dir + "/learner-safetensors-f64", 4, text(write_safetensors({{"logits", {1, 2, 3}, {1, 2, 3, 4, 5, 6}}}, DType::f64)));
    // Mode 5 reads as many pieces as 1 + 4 x its first byte: 1 + 4 x 100 = 401 here.
    write(dir + "/llama2c-tokenizer-401", 5, std::string(1, char(100)) + text(synthetic_tokenizer_bin(401)));
    ModelConfig interleaved = fuzz_micro_config();  // llama2.c's files rotate adjacent pairs
    interleaved.rope_pairing = RopePairing::interleaved;
    for (int version : {0, 1}) {
        std::string bytes;
        write_llama2c(random_model(interleaved, 3), 8, version, [&](const std::vector<std::uint8_t>& piece) { bytes += text(piece); });
        write(dir + "/llama2c-model-v" + std::to_string(version), 6, bytes);
    }
    return 0;
}
