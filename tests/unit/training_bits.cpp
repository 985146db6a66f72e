// Prints training_bits(seed, steps) (core/train/train_steps.hpp) as JSON: the native
// side of tests/wasm/training_bits.test.mjs.   usage: training_bits SEED STEPS
#include <cstdlib>
#include <iostream>

#include <nlohmann/json.hpp>

#include "train/train_steps.hpp"

int main(int argc, char** argv) {
    if (argc != 3) {
        std::cerr << "usage: training_bits SEED STEPS\n";
        return 2;
    }
    std::cout << anatomy::training_bits(std::strtoull(argv[1], nullptr, 10), std::atoi(argv[2])).dump() << "\n";
    return 0;
}
