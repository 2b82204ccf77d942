package kernel

import (
	"github.com/hologramagent/hologram/kernel/assistants"
	"github.com/hologramagent/hologram/kernel/client"
	"github.com/hologramagent/hologram/kernel/memadmin"
	"github.com/hologramagent/hologram/kernel/speech"
)

// The kernel's roles (client.Service's parts): each is a small adapter over the Kernel, handed
// out on its own (k.Chat(), k.Memory() …) and all together by k.Service(). They hold nothing but
// the kernel, so they are cheap to copy and safe for concurrent use as the Kernel is.
type (
	systemRole   struct{ *Kernel } // health, status, pause (service.go, desktop.go)
	chatRole     struct{ *Kernel } // turns (service.go)
	sessionRole  struct{ *Kernel } // sessions and history (service.go)
	providerRole struct{ *Kernel } // LLM providers (providers.go, desktop.go)
	pluginRole   struct{ *Kernel } // plugins and tools (plugins.go, service.go)
	memoryRole   struct {          // window, search, GC, export (memory.go, backup.go); the graph (memadmin)
		*Kernel
		*memadmin.Admin
	}
	modelRole      struct{ *Kernel } // dense models (embedding.go)
	approvalRole   struct{ *Kernel } // the owner's approvals (approval.go)
	completionRole struct{ *Kernel } // /v1 (completions.go, providers.go)
)

// Services is every role of the kernel in one value: it implements client.Service and
// client.CompletionService (what kernel/api serves).
type Services struct {
	systemRole
	chatRole
	sessionRole
	providerRole
	pluginRole
	memoryRole
	modelRole
	approvalRole
	completionRole
	*assistants.Service // client.AssistantService
	speech.Synth        // client.Speaker: replies spoken (espeak-ng, as POST /api/v1/speech)
}

var _ client.Speaker = Services{}

// Service returns all of the kernel's roles as one client.Service (and CompletionService).
func (k *Kernel) Service() Services {
	return Services{systemRole{k}, chatRole{k}, sessionRole{k}, providerRole{k}, pluginRole{k}, memoryRole{k, k.admin}, modelRole{k},
		approvalRole{k}, completionRole{k}, k.asst, speech.Synth{}}
}

// System returns the kernel's health, status and pause role.
func (k *Kernel) System() client.SystemService { return systemRole{k} }

// Chat returns the kernel's chat role.
func (k *Kernel) Chat() client.ChatService { return chatRole{k} }

// Sessions returns the kernel's sessions role.
func (k *Kernel) Sessions() client.SessionService { return sessionRole{k} }

// Providers returns the kernel's providers role.
func (k *Kernel) Providers() client.ProviderService { return providerRole{k} }

// Plugins returns the kernel's plugins role.
func (k *Kernel) Plugins() client.PluginService { return pluginRole{k} }

// Memory returns the kernel's memory role.
func (k *Kernel) Memory() client.MemoryService { return memoryRole{k, k.admin} }

// Models returns the kernel's dense-model role.
func (k *Kernel) Models() client.ModelService { return modelRole{k} }

// Approvals returns the kernel's approvals role.
func (k *Kernel) Approvals() client.ApprovalService { return approvalRole{k} }

// Completion returns the kernel's OpenAI-compatible role (/v1).
func (k *Kernel) Completion() client.CompletionService { return completionRole{k} }

var (
	_ client.Service           = Services{}
	_ client.CompletionService = Services{}
)
