// Package stt turns voice messages into text: [Decode] reads a recording (ffmpeg for Ogg/Opus,
// MP3, M4A, WebM…; WAV also without it) as 16 kHz mono, the Silero voice activity detector
// (memory/vad) keeps the stretches of speech, and a Whisper model run with ONNX Runtime
// transcribes them ([Model]): Whisper's log-mel features ([LogMel]), its encoder once per 30 s
// chunk, then greedy decoding from its prompt (start of transcript, language, transcribe, no
// timestamps) to the end-of-text token, the tokens read back to text through the byte-level
// vocabulary ([Tokens]). The model comes from the model manager (memory/embed's catalogue,
// downloaded on request, never bundled); without one, audio is kept untranscribed.
package stt
