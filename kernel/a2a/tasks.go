package a2a

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
	"github.com/hologramagent/hologram/memory"
)

// taskPrefix is the settings key prefix of the tasks: a2a.task.<id> holds a [storedTask]. Tasks
// live in the kernel's SQLite file, so they survive a restart.
const taskPrefix = "a2a.task."

// maxTasks bounds the stored tasks: beyond it the oldest finished ones are dropped.
const maxTasks = 2000

// maxHistory bounds the messages a task keeps (the oldest are dropped).
const maxHistory = 100

// storedTask is one task with its owner (the peer) and its version (optimistic concurrency).
type storedTask struct {
	Peer    string                `json:"peer"`
	Version taskstore.TaskVersion `json:"version"`
	Updated time.Time             `json:"updated"`
	Task    *a2a.Task             `json:"task"`
}

// tasks is a [taskstore.Store] over the kernel's settings. The peer of a task is the A2A user
// of the call that created it; ListTasks shows a peer only its own tasks, and the interceptor
// ([Service.Before]) refuses every call naming another peer's task.
type tasks struct {
	settings Settings
	now      func() time.Time
	mu       sync.Mutex // serialises read-modify-write (the version check)
}

var _ taskstore.Store = (*tasks)(nil)

func peerOf(ctx context.Context) (string, error) {
	if cc, ok := a2asrv.CallContextFrom(ctx); ok && cc.User != nil && cc.User.Authenticated && cc.User.Name != "" {
		return cc.User.Name, nil
	}
	return "", a2a.ErrUnauthenticated
}

func (t *tasks) load(ctx context.Context, id a2a.TaskID) (storedTask, error) {
	raw, err := t.settings.GetSetting(ctx, taskPrefix+string(id))
	if errors.Is(err, memory.ErrNotFound) {
		return storedTask{}, a2a.ErrTaskNotFound
	}
	if err != nil {
		return storedTask{}, fmt.Errorf("loading task %s: %w", id, err)
	}
	var st storedTask
	if err := json.Unmarshal([]byte(raw), &st); err != nil || st.Task == nil {
		return storedTask{}, fmt.Errorf("task %s is damaged in the store: %v", id, err)
	}
	return st, nil
}

func (t *tasks) save(ctx context.Context, st storedTask) error {
	if n := len(st.Task.History); n > maxHistory {
		st.Task.History = st.Task.History[n-maxHistory:]
	}
	raw, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("encoding task %s: %w", st.Task.ID, err)
	}
	if err := t.settings.SetSetting(ctx, taskPrefix+string(st.Task.ID), string(raw)); err != nil {
		return fmt.Errorf("storing task %s: %w", st.Task.ID, err)
	}
	return nil
}

// Create implements [taskstore.Store].
func (t *tasks) Create(ctx context.Context, task *a2a.Task) (taskstore.TaskVersion, error) {
	if task == nil || task.ID == "" {
		return taskstore.TaskVersionMissing, fmt.Errorf("a task without an id: %w", a2a.ErrInvalidParams)
	}
	name, err := peerOf(ctx)
	if err != nil {
		return taskstore.TaskVersionMissing, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, err := t.load(ctx, task.ID); err == nil {
		return taskstore.TaskVersionMissing, taskstore.ErrTaskAlreadyExists
	}
	if err := t.save(ctx, storedTask{Peer: name, Version: 1, Updated: t.now(), Task: task}); err != nil {
		return taskstore.TaskVersionMissing, err
	}
	t.prune(ctx)
	return 1, nil
}

// Update implements [taskstore.Store].
func (t *tasks) Update(ctx context.Context, req *taskstore.UpdateRequest) (taskstore.TaskVersion, error) {
	if req == nil || req.Task == nil {
		return taskstore.TaskVersionMissing, fmt.Errorf("an update without a task: %w", a2a.ErrInvalidParams)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	st, err := t.load(ctx, req.Task.ID)
	if err != nil {
		return taskstore.TaskVersionMissing, err
	}
	if req.PrevVersion != taskstore.TaskVersionMissing && st.Version != req.PrevVersion {
		return taskstore.TaskVersionMissing, taskstore.ErrConcurrentModification
	}
	st.Version++
	st.Updated, st.Task = t.now(), req.Task
	if err := t.save(ctx, st); err != nil {
		return taskstore.TaskVersionMissing, err
	}
	return st.Version, nil
}

// Get implements [taskstore.Store].
func (t *tasks) Get(ctx context.Context, id a2a.TaskID) (*taskstore.StoredTask, error) {
	st, err := t.load(ctx, id)
	if err != nil {
		return nil, err
	}
	return &taskstore.StoredTask{Task: st.Task, Version: st.Version}, nil
}

// owner returns the peer a task belongs to.
func (t *tasks) owner(ctx context.Context, id a2a.TaskID) (string, error) {
	st, err := t.load(ctx, id)
	return st.Peer, err
}

// all returns every stored task, most recently updated first.
func (t *tasks) all(ctx context.Context) ([]storedTask, error) {
	raw, err := t.settings.ListSettings(ctx, taskPrefix)
	if err != nil {
		return nil, fmt.Errorf("listing tasks: %w", err)
	}
	out := make([]storedTask, 0, len(raw))
	for _, v := range raw {
		var st storedTask
		if json.Unmarshal([]byte(v), &st) == nil && st.Task != nil {
			out = append(out, st)
		}
	}
	slices.SortFunc(out, func(a, b storedTask) int {
		if c := b.Updated.Compare(a.Updated); c != 0 {
			return c
		}
		return strings.Compare(string(b.Task.ID), string(a.Task.ID))
	})
	return out, nil
}

// prune drops the oldest finished tasks beyond maxTasks (t.mu held).
func (t *tasks) prune(ctx context.Context) {
	all, err := t.all(ctx)
	if err != nil || len(all) <= maxTasks {
		return
	}
	for _, st := range all[maxTasks:] {
		if st.Task.Status.State.Terminal() {
			_ = t.settings.DeleteSetting(ctx, taskPrefix+string(st.Task.ID))
		}
	}
}

// List implements [taskstore.Store]: the calling peer's tasks only, newest first.
func (t *tasks) List(ctx context.Context, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	name, err := peerOf(ctx)
	if err != nil {
		return nil, err
	}
	size := req.PageSize
	switch {
	case size == 0:
		size = 50
	case size < 1 || size > 100:
		return nil, fmt.Errorf("pageSize must be between 1 and 100, got %d: %w", size, a2a.ErrInvalidParams)
	}
	all, err := t.all(ctx)
	if err != nil {
		return nil, err
	}
	var mine []storedTask
	for _, st := range all {
		switch {
		case st.Peer != name:
		case req.ContextID != "" && st.Task.ContextID != req.ContextID:
		case req.Status != a2a.TaskStateUnspecified && st.Task.Status.State != req.Status:
		case req.StatusTimestampAfter != nil && st.Task.Status.Timestamp != nil && st.Task.Status.Timestamp.Before(*req.StatusTimestampAfter):
		default:
			mine = append(mine, st)
		}
	}
	start := 0
	if req.PageToken != "" {
		id, err := base64.RawURLEncoding.DecodeString(req.PageToken)
		if err != nil {
			return nil, fmt.Errorf("pageToken is not one this server gave: %w", a2a.ErrInvalidParams)
		}
		start = slices.IndexFunc(mine, func(st storedTask) bool { return string(st.Task.ID) == string(id) }) + 1
		if start == 0 {
			return nil, fmt.Errorf("pageToken names no task of yours: %w", a2a.ErrInvalidParams)
		}
	}
	page := mine[start:]
	next := ""
	if len(page) > size {
		page = page[:size]
		next = base64.RawURLEncoding.EncodeToString([]byte(page[size-1].Task.ID))
	}
	out := &a2a.ListTasksResponse{Tasks: make([]*a2a.Task, 0, len(page)), TotalSize: len(mine), PageSize: size, NextPageToken: next}
	for _, st := range page {
		task := st.Task
		if req.HistoryLength != nil {
			if n := *req.HistoryLength; n == 0 {
				task.History = []*a2a.Message{}
			} else if n > 0 && len(task.History) > n {
				task.History = task.History[len(task.History)-n:]
			}
		}
		if !req.IncludeArtifacts {
			task.Artifacts = nil
		}
		out.Tasks = append(out.Tasks, task)
	}
	return out, nil
}

// interrupted marks the tasks a previous kernel left running as failed: their turns died with
// it. Tasks waiting for input keep waiting.
func (t *tasks) interrupted(ctx context.Context) (int, error) {
	all, err := t.all(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, st := range all {
		switch st.Task.Status.State {
		case a2a.TaskStateSubmitted, a2a.TaskStateWorking:
		default:
			continue
		}
		now := t.now()
		st.Task.Status = a2a.TaskStatus{State: a2a.TaskStateFailed, Timestamp: &now,
			Message: a2a.NewMessageForTask(a2a.MessageRoleAgent, st.Task, a2a.NewTextPart("the agent restarted while this task ran; send the message again"))}
		st.Version++
		st.Updated = now
		if err := t.save(ctx, st); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
