// The checks of the page's WebGPU attention kernels (web/src/gpu/), written once in
// the core (core/verify/kernel_cases.hpp): the page asks for the cases and their
// inputs, runs the kernels on its device, and hands the outputs back here to be
// compared with the core's reference. A module of its own, loaded only where the
// kernels are checked.
//
// A case is named by its id, or is one of the page's own, {shape: {B, Hq, Hkv, T, S, D},
// mask: spec} (figure_case: the notebook's figures).
//   kernelCases()                       -> [{id, what, shape: {B, Hq, Hkv, T, S, D}, mask, sinks, blind_row, decode}]
//   kernelInputs(case)                  -> {q, k, v: Float32Array, sinks: Float32Array | null, ranges: Int32Array [T, 4]}
//                                          or {error}
//   checkKernelOutput(case, kernel, out, probs)
//                                       out: Float32Array [B, Hq, T, D]; probs: Float32Array [B, Hq, T, S] or null
//                                       -> [check records]
//   checkKernelSample(case, kernel, out, rows)
//                                       the output on `rows` query rows only -> [check records]
//   checkTileRecord(case, {tile_q, tile_k, batch, head, row}, states, trace)
//                                       states: Uint32Array [rows, cols]; trace: Float32Array [cols, 2]
//                                       -> [check records]
//   tileCounts(case, tile_q, tile_k)    -> {rows, cols, skipped, partial, full}: the core's tile rule
//   rowSteps(case, {tile_k, batch, head, row})
//                                       -> one row's online softmax tile by tile (core/verify/online_softmax_steps.hpp):
//                                          {batch, head, row, tile_k, scores [S], sink, probs [S], out [D],
//                                           steps: [{first, last, visible, tile_max, m, l, rescale, acc [D]}]},
//                                          null for -infinity (a hidden key's score, a tile's or row's maximum before any key)
//   maskRanges(spec)                    spec: {kind, T, S, window, sinks, prefix, chunk, document_lengths}
//                                       -> Int32Array [T, 4]: each query row's visible keys, or {error}
//
// The check suite attn verify runs (core/verify/check_suite.hpp) on the tiny model with
// its attention on the device, by replay (core/verify/device_attention_backend.hpp):
//   const suite = new DeviceSuite({sinks})   the tiny model (seed 1), or with learned sinks (seed 2)
//   suite.run()                          -> {complete, requests, checks}: a round of the suite;
//                                           checks once complete, else the attentions it asks for
//   suite.request(i)                     -> {key, shape, q, k, v, sinks, ranges}: the i-th of them
//   suite.answer(key, out, probs)        -> {} once the device's answer is taken (probs may be null)
//   suite.delete()
// Every function that can fail returns {error} instead of throwing.
#include <cmath>

#include <emscripten/bind.h>
#include <emscripten/val.h>

#include "json_args.hpp"
#include "model/token_batch.hpp"
#include "verify/check_suite.hpp"
#include "verify/device_attention_backend.hpp"
#include "verify/kernel_cases.hpp"
#include "verify/online_softmax_steps.hpp"

namespace anatomy::wasm {
namespace {

// A copy of `values` as a new JavaScript typed array (a view into the wasm heap would
// change under it when memory grows).
template <typename T>
emscripten::val js_copy(const char* type, const std::vector<T>& values) {
    emscripten::val copy = emscripten::val::global(type).new_(values.size());
    copy.call<void>("set", emscripten::val(emscripten::typed_memory_view(values.size(), values.data())));
    return copy;
}

json records_json(const std::vector<CheckRecord>& records) {
    json out = json::array();
    for (const CheckRecord& r : records) out.push_back(check_to_json(r));
    return out;
}

const Options figure_case_options{"figureCase", {"shape", "mask"}};
const Options figure_shape_options{"figureCase.shape", {"B", "Hq", "Hkv", "T", "S", "D"}};

// A case by its id, or the page's own {shape, mask}.
KernelCase case_from_js(const emscripten::val& ref) {
    if (ref.isString()) return kernel_case(ref.as<std::string>());
    const json options = options_from_js(ref, figure_case_options);
    if (!options.contains("shape") || !options.contains("mask")) throw InputError("a figure's case needs a shape and a mask");
    const json& shape = options["shape"];
    require_known_options(shape, figure_shape_options);
    const auto dimension = [&](const char* name) {
        const int value = int_option(shape, name, 0);
        if (value < 1) throw InputError(std::string("the shape's ") + name + " must be a whole number of at least 1");
        return std::int64_t(value);
    };
    return figure_case({dimension("B"), dimension("Hq"), dimension("Hkv"), dimension("T"), dimension("S"), dimension("D")},
                       mask_spec_from_json(options["mask"]));
}

std::string kernel_cases_json() {
    return json_or_error([] {
        json cases = json::array();
        for (const KernelCase& c : kernel_cases()) {
            const KernelShape& s = c.shape;
            cases.push_back({{"id", c.id},
                             {"what", c.what},
                             {"shape", {{"B", s.B}, {"Hq", s.Hq}, {"Hkv", s.Hkv}, {"T", s.T}, {"S", s.S}, {"D", s.D}}},
                             {"mask", mask_kind_name(c.mask.kind)},
                             {"sinks", c.sinks},
                             {"blind_row", c.blind_row},
                             {"decode", c.decode()}});
        }
        return cases;
    });
}

// {q, k, v, sinks, ranges} as typed arrays (sinks null when there are none).
emscripten::val inputs_js(const KernelInputs& in) {
    emscripten::val out = emscripten::val::object();
    out.set("q", js_copy("Float32Array", in.q));
    out.set("k", js_copy("Float32Array", in.k));
    out.set("v", js_copy("Float32Array", in.v));
    out.set("sinks", in.sinks.empty() ? emscripten::val::null() : js_copy("Float32Array", in.sinks));
    out.set("ranges", js_copy("Int32Array", in.ranges));
    return out;
}

emscripten::val error_js(const std::string& message) {
    emscripten::val out = emscripten::val::object();
    out.set("error", message);
    return out;
}

emscripten::val kernel_inputs_js(const emscripten::val& id) {
    try {
        return inputs_js(kernel_inputs(case_from_js(id)));
    } catch (const std::exception& e) {
        return error_js(e.what());
    }
}

std::string check_kernel_output_js(const emscripten::val& id, const std::string& kernel, const emscripten::val& out,
                                   const emscripten::val& probs) {
    return json_or_error([&] {
        const std::vector<float> got = emscripten::convertJSArrayToNumberVector<float>(out);
        if (probs.isNull() || probs.isUndefined()) return records_json(check_kernel_output(case_from_js(id), kernel, got, nullptr));
        const std::vector<float> got_probs = emscripten::convertJSArrayToNumberVector<float>(probs);
        return records_json(check_kernel_output(case_from_js(id), kernel, got, &got_probs));
    });
}

std::string check_kernel_sample_js(const emscripten::val& id, const std::string& kernel, const emscripten::val& out, int rows) {
    return json_or_error([&] {
        return records_json(check_kernel_sample(case_from_js(id), kernel, emscripten::convertJSArrayToNumberVector<float>(out), rows));
    });
}

const Options tile_record_options{"checkTileRecord", {"tile_q", "tile_k", "batch", "head", "row"}};

std::string check_tile_record_js(const emscripten::val& id, const emscripten::val& where_js, const emscripten::val& states,
                                 const emscripten::val& trace) {
    return json_or_error([&] {
        const json where = options_from_js(where_js, tile_record_options);
        return records_json(check_tile_record(
            case_from_js(id), int_option(where, "tile_q", 0), int_option(where, "tile_k", 0), int_option(where, "batch", 0),
            int_option(where, "head", 0), int_option(where, "row", 0),
            emscripten::convertJSArrayToNumberVector<std::uint32_t>(states),
            emscripten::convertJSArrayToNumberVector<float>(trace)));
    });
}

std::string tile_counts_js(const emscripten::val& id, int tile_q, int tile_k) {
    return json_or_error([&] {
        const TileCounts counts = classify_tiles(case_from_js(id).mask, tile_q, tile_k);
        return json{{"rows", counts.rows}, {"cols", counts.cols}, {"skipped", counts.skipped},
                    {"partial", counts.partial}, {"full", counts.full}};
    });
}

const Options row_steps_options{"rowSteps", {"tile_k", "batch", "head", "row"}};

std::string row_steps_js(const emscripten::val& id, const emscripten::val& where_js) {
    return json_or_error([&] {
        const json where = options_from_js(where_js, row_steps_options);
        const KernelCase c = case_from_js(id);
        const OnlineSoftmaxRow r = online_softmax_steps(c, kernel_inputs(c), int_option(where, "tile_k", 0),
                                                        int_option(where, "batch", 0), int_option(where, "head", 0),
                                                        int_option(where, "row", 0));
        // -infinity (a hidden key, nothing seen yet) becomes null, as JSON has no infinities.
        const auto finite = [](double x) { return std::isfinite(x) ? json(x) : json(nullptr); };
        const auto list = [&](const std::vector<double>& xs) {
            json out = json::array();
            for (double x : xs) out.push_back(finite(x));
            return out;
        };
        json steps = json::array();
        for (const OnlineSoftmaxStep& step : r.steps)
            steps.push_back({{"first", step.first}, {"last", step.last}, {"visible", step.visible},
                             {"tile_max", finite(step.tile_max)}, {"m", finite(step.m)}, {"l", step.l},
                             {"rescale", step.rescale}, {"acc", list(step.acc)}});
        return json{{"batch", r.batch}, {"head", r.head}, {"row", r.row}, {"tile_k", r.tile_k},
                    {"scores", list(r.scores)}, {"sink", finite(r.sink)}, {"probs", list(r.probs)},
                    {"out", list(r.out)}, {"steps", steps}};
    });
}

emscripten::val mask_ranges_js(const emscripten::val& spec_js) {
    try {
        return js_copy("Int32Array", visible_key_ranges(mask_spec_from_json(json_from_js(spec_js))));
    } catch (const std::exception& e) {
        return error_js(e.what());
    }
}

const Options device_suite_option_names{"DeviceSuite", {"sinks"}};

ModelConfig suite_config(bool sinks) {
    ModelConfig config = tiny_config();
    config.attention_sinks = sinks;
    return config;
}

// {sinks} as given, or the reason it is refused (run() then answers {error}: a constructor
// that threw would reach JavaScript as a bare wasm exception).
struct SuiteChoice {
    bool sinks = false;
    std::string refused;
};

SuiteChoice suite_choice(const emscripten::val& options_js) {
    SuiteChoice choice;
    try {
        choice.sinks = bool_option(options_from_js(options_js, device_suite_option_names), "sinks", false);
    } catch (const std::exception& e) {
        choice.refused = e.what();
    }
    return choice;
}

class DeviceSuite {
public:
    explicit DeviceSuite(const emscripten::val& options_js)
        : choice_(suite_choice(options_js)),
          model_(random_model(suite_config(choice_.sinks), choice_.sinks ? 2 : default_seed)),
          backend_(model_) {}

    std::string run() {
        return json_or_error([&] {
            if (!choice_.refused.empty()) throw InputError(choice_.refused);
            backend_.begin_round();
            // attn verify's tokens: 1..6 and a shifted second sequence.
            const std::vector<CheckRecord> checks =
                run_check_suite(backend_, make_batch({1, 2, 3, 4, 5, 6}, 2, model_.config.vocab_size), device_suite_options());
            json out = {{"complete", backend_.complete()}, {"requests", backend_.requests().size()}};
            out["checks"] = backend_.complete() ? records_json(checks) : json::array();
            return out;
        });
    }

    emscripten::val request(int i) const {
        if (i < 0 || std::size_t(i) >= backend_.requests().size())
            return error_js("no request " + std::to_string(i) + " in this round");
        const AttentionRequest& r = backend_.requests()[std::size_t(i)];
        emscripten::val shape = emscripten::val::object();
        for (const auto& [name, value] : {std::pair{"B", r.shape.B}, {"Hq", r.shape.Hq}, {"Hkv", r.shape.Hkv},
                                          {"T", r.shape.T}, {"S", r.shape.S}, {"D", r.shape.D}})
            shape.set(name, double(value));
        emscripten::val out = inputs_js(r.inputs);
        out.set("key", r.key);
        out.set("shape", shape);
        return out;
    }

    std::string answer(const std::string& key, const emscripten::val& out, const emscripten::val& probs) {
        return json_or_error([&] {
            backend_.answer(key, emscripten::convertJSArrayToNumberVector<float>(out),
                            probs.isNull() || probs.isUndefined() ? std::vector<float>{}
                                                                  : emscripten::convertJSArrayToNumberVector<float>(probs));
            return json::object();
        });
    }

private:
    SuiteChoice choice_;
    Model<float> model_;
    DeviceAttentionBackend backend_;
};

}  // namespace

EMSCRIPTEN_BINDINGS(anatomy_kernel_checks) {
    emscripten::class_<DeviceSuite>("DeviceSuite")
        .constructor<const emscripten::val&>()
        .function("run", &DeviceSuite::run)
        .function("request", &DeviceSuite::request)
        .function("answer", &DeviceSuite::answer);
    emscripten::function("kernelCases", &kernel_cases_json);
    emscripten::function("kernelInputs", &kernel_inputs_js);
    emscripten::function("checkKernelOutput", &check_kernel_output_js);
    emscripten::function("checkTileRecord", &check_tile_record_js);
    emscripten::function("tileCounts", &tile_counts_js);
    emscripten::function("checkKernelSample", &check_kernel_sample_js);
    emscripten::function("rowSteps", &row_steps_js);
    emscripten::function("maskRanges", &mask_ranges_js);
}

}  // namespace anatomy::wasm
