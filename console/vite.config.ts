import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';
import pkg from './package.json' with { type: 'json' };

/** Where the gateway listens in the local stack; it answers /api and proxies the relay paths. */
const gateway = process.env.AIGW_GATEWAY_URL ?? 'http://localhost:3000';
const proxied = ['/api', '/v1', '/pg', '/mj', '/suno'];
const proxy = Object.fromEntries(proxied.map((prefix) => [prefix, { target: gateway, changeOrigin: true }]));

export default defineConfig({
  plugins: [react()],
  // The gateway serves dist/ at the site root and falls back to index.html for client-side routes.
  base: '/',
  define: {
    __APP_VERSION__: JSON.stringify(`v${pkg.version}`),
  },
  server: { port: 5173, proxy },
  preview: { port: 4173, proxy },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    chunkSizeWarningLimit: 1500,
    rollupOptions: {
      output: {
        manualChunks: {
          react: ['react', 'react-dom', 'react-router-dom'],
          arco: ['@arco-design/web-react'],
        },
      },
    },
  },
});
