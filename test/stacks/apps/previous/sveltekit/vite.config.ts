import { sveltekit } from '@sveltejs/kit/vite'
import { defineConfig } from 'vite'

// SvelteKit 2 reads its options from svelte.config.js.
export default defineConfig({ plugins: [sveltekit()] })
