package clienttest

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"net/http"
	"strings"
	"unicode"
)

// speech answers POST /api/v1/speech as the kernel does, with a tone instead of espeak-ng's
// voice: half a second of 440 Hz per 10 characters (16-bit mono, 16 kHz), the voice named by
// the text's script as kernel/speech names it.
func speech(w http.ResponseWriter, body []byte) {
	var in struct {
		Text  string `json:"text"`
		Voice string `json:"voice"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		WriteError(w, http.StatusBadRequest, "speech: "+err.Error())
		return
	}
	if strings.TrimSpace(in.Text) == "" {
		WriteError(w, http.StatusBadRequest, "speech: no text to speak")
		return
	}
	voice := in.Voice
	if voice == "" {
		voice = "en"
		if strings.IndexFunc(in.Text, func(r rune) bool { return unicode.Is(unicode.Han, r) }) >= 0 {
			voice = "cmn"
		}
	}
	const rate = 16000
	n := rate / 2 * (1 + len([]rune(in.Text))/10)
	b := make([]byte, 44+2*n)
	copy(b, "RIFF")
	binary.LittleEndian.PutUint32(b[4:], uint32(len(b)-8))
	copy(b[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(b[16:], 16)
	binary.LittleEndian.PutUint16(b[20:], 1)
	binary.LittleEndian.PutUint16(b[22:], 1)
	binary.LittleEndian.PutUint32(b[24:], rate)
	binary.LittleEndian.PutUint32(b[28:], 2*rate)
	binary.LittleEndian.PutUint16(b[32:], 2)
	binary.LittleEndian.PutUint16(b[34:], 16)
	copy(b[36:], "data")
	binary.LittleEndian.PutUint32(b[40:], uint32(2*n))
	for i := 0; i < n; i++ {
		v := int16(8000 * math.Sin(2*math.Pi*440*float64(i)/rate))
		binary.LittleEndian.PutUint16(b[44+2*i:], uint16(v))
	}
	w.Header().Set("Content-Type", "audio/wav")
	w.Header().Set("X-Hologram-Voice", voice)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}
