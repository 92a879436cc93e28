// A Hugging Face tokenizer.json (a Gemma 3 folder's): its model, vocabulary, merges and added tokens, then a short
// text through the tokenizer it makes.
#include "core/error.h"
#include "fuzz_target.h"
#include "models/gemma3/tokenizer.h"

LTX_FUZZ_TARGET(tokenizer_json) {
  static ltx::fuzz::InputFile file("tokenizer_json");
  try {
    const ltx::gemma3::Tokenizer tok = ltx::gemma3::Tokenizer::from_hf_json(file.write(data, size));
    (void)tok.decode(tok.encode("a red fox <start_of_turn> \xF0\x9F\x8C\x83 snow"), true);
  } catch (const ltx::Error&) {
  }
  return 0;
}
